"""A GRPO step's update, timed both ways on the same rows: each episode read whole, and each
group's common prefix read once.

    python benchmarks/grpo_update.py runs/tool_env/grpo/rollouts.jsonl \
        --model runs/tool_env/sft_model --step 1

The rows are a step's rollouts as ``examples/train_tool_env.py`` writes them, group by group;
the advantages come from their logged rewards, and groups whose rewards do not spread are
left out, as the run leaves them. ``--model`` is the folder of the weights the step sampled
from (step 1: the SFT model). The two ways take turns, ``--repeats`` times each, on one model
with a learning rate of 0, so both read the same weights; the gradients they leave are
compared (their difference over the norm), and under bfloat16 autocast (the run's default)
beside bfloat16's own error, the whole reading's against float32.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any


def timed_update(model: Any, rows: list[dict], share: bool, bf16: bool) -> tuple[float, list]:
    """Seconds of one update (learning rate 0) and the gradients it leaves."""
    import torch

    from meeting_gym.training.grpo import policy_step

    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    began = time.perf_counter()
    policy_step(model, optimizer, rows, bf16=bf16, share_prefix=share)
    seconds = time.perf_counter() - began
    return seconds, [p.grad.detach().clone() for p in model.parameters()]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("rollouts", help="a run's grpo/rollouts.jsonl")
    p.add_argument("--model", required=True, help="the folder of the weights the step sampled")
    p.add_argument("--step", type=int, default=1)
    p.add_argument("--group", type=int, default=8, help="episodes per item (the run's --group)")
    p.add_argument("--repeats", type=int, default=1, help="updates timed each way")
    p.add_argument("--groups", type=int, default=None, help="the step's first N groups only")
    p.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=True)
    args = p.parse_args(argv)
    if args.group < 1 or args.repeats < 1 or (args.groups is not None and args.groups < 1):
        p.error("--group, --repeats and --groups must be at least 1")
    try:
        text = Path(args.rollouts).read_text(encoding="utf-8")
        rows = [json.loads(line) for line in text.splitlines()]
        from meeting_gym.training.groups import step_rows

        transcripts, weights, groups = step_rows(rows, args.step, args.group, args.groups)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        p.error(f"{args.rollouts}: {exc}")
    from meeting_gym.agentkit.local import load_model, resolve_model
    from meeting_gym.training.finetune import trainable
    from meeting_gym.training.grpo import policy_rows, shared_length

    try:
        source = resolve_model(args.model)
    except ValueError as exc:
        p.error(str(exc))
    tokenizer, model = load_model(source)  # as the training run loads it
    model = trainable(model)
    stops = [tokenizer.convert_tokens_to_ids("<|im_end|>")]
    token_rows = policy_rows(tokenizer, transcripts, weights, stops, groups)
    by_group: dict[int, list[dict]] = {}
    for row in token_rows:
        by_group.setdefault(row["group"], []).append(row)
    tokens = sum(len(r["input_ids"]) for r in token_rows)
    shared = sum(shared_length(g) for g in by_group.values() if len(g) > 1)
    print(
        f"step {args.step}: {len(by_group)} groups, {len(token_rows)} episodes, "
        f"{tokens / len(token_rows):.0f} tokens an episode, "
        f"{shared / len(by_group):.0f} alike at the start of a group's episodes",
        flush=True,
    )
    times: dict[bool, list[float]] = {False: [], True: []}
    grads: dict[bool, list] = {}
    for _ in range(args.repeats):
        for share in (False, True):
            seconds, grads[share] = timed_update(model, token_rows, share, args.bf16)
            times[share].append(seconds)
    whole, once = min(times[False]), min(times[True])
    print(f"each episode whole: {whole:.1f} s")
    print(f"prefix read once:   {once:.1f} s")
    print(f"faster: {whole / once:.2f}x (the fastest of {args.repeats} each)")
    if args.bf16:  # bfloat16 rounds each way differently: its own error is the yardstick
        _, exact = timed_update(model, token_rows, False, bf16=False)
        print(
            f"bfloat16's own error (read whole, against float32): "
            f"{relative(grads[False], exact):.2g} of the norm"
        )
    print(f"gradients differ by {relative(grads[True], grads[False]):.2g} of their norm")
    return 0


def relative(grads: list, reference: list) -> float:
    """``|grads - reference| / |reference|`` over all parameters together."""
    import torch

    a = torch.cat([g.flatten() for g in grads])
    b = torch.cat([g.flatten() for g in reference])
    return float((a - b).norm() / b.norm())


if __name__ == "__main__":
    sys.exit(main())

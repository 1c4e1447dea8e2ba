"""Ray RLlib adapter: the family's discrete envs as RLlib envs with action masks.

``pip install torch==2.13.0 && pip install "meeting-gym[rllib]"`` (Ray does not pull
torch; installing it first keeps pip from pulling a CUDA build). Ray is imported only
by the functions that need it (:func:`register`, :func:`masked_mlp_spec`,
:func:`ppo_config`); the wrapper and the observation layout need gymnasium and
numpy only.

RLlib's action-masking module (``ActionMaskingTorchRLModule`` from RLlib's examples)
and :class:`~meeting_gym.envs.meeting_slot.models.rllib_module.PointerRLModule` take
observations of the form ``{"action_mask": Box(0, 1, (n,)), "observations": Box}``:
what :class:`~meeting_gym.core.masked.MaskedObservation` gives (the env's own mask as
floats, its ``Dict`` observation flattened as SB3's ``MultiInputPolicy`` flattens it).
Nothing else changes: actions, rewards, episode ends and infos are the env's.

    import meeting_gym.adapters.rllib as rl
    rl.register()                       # every id with a discrete mode, under its own name
    config = rl.ppo_config("MeetingSlot-v0", rl.masked_mlp_spec())
    algo = config.build_algo()
"""

from __future__ import annotations

import functools
import json
from typing import Any

import gymnasium as gym
from gymnasium.error import DependencyNotInstalled

from meeting_gym.core.curriculum import Curriculum
from meeting_gym.core.curriculum_wrapper import CurriculumWrapper
from meeting_gym.core.masked import (  # noqa: F401  (the adapter's names since 0.2)
    MASK,
    OBSERVATIONS,
    MaskedObservation,
    masked_space,
    observation_layout,
    to_rllib,
)
from meeting_gym.core.registry import ENVS, load_object

INSTALL_HINT = 'pip install torch==2.13.0 && pip install "meeting-gym[rllib]"'


def require_rllib() -> Any:
    """Import ``ray.rllib`` (and torch), or raise ``DependencyNotInstalled`` with the hint."""
    try:
        import torch  # noqa: F401  (RLlib's torch modules need it; Ray does not pull it)
        from ray import rllib
    except ImportError as error:
        raise DependencyNotInstalled(
            f"Ray RLlib and torch are needed for this ({error.name} is missing): {INSTALL_HINT}"
        ) from error
    return rllib


def discrete_env_ids() -> list[str]:
    """The registered ids whose env class offers the discrete mode (what RLlib can train)."""
    return [
        env_id
        for env_id in ENVS
        if "discrete" in getattr(load_object(gym.spec(env_id).entry_point), "modes", ())
    ]


def make_env(env_id: str, config: dict[str, Any] | None = None) -> MaskedObservation:
    """``gym.make(env_id, mode="discrete", **config)`` wrapped for RLlib (an env creator).

    ``config["curriculum"]`` (True, or an object of
    :meth:`~meeting_gym.core.curriculum.Curriculum.from_option`'s fields) draws every reset's
    item from a curriculum: one per env runner, shared by its sub-envs, seeded with the
    option's seed plus the runner's index so that runners draw different items.
    """
    kwargs = dict(config or {})  # RLlib passes an EnvContext (a dict with worker info)
    option = kwargs.pop("curriculum", None)
    kwargs.setdefault("mode", "discrete")
    env = gym.make(env_id, **kwargs)
    if option:
        worker = int(getattr(config, "worker_index", 0))
        env = CurriculumWrapper(env, runner_curriculum(env_id, option, worker))
    return MaskedObservation(env)


_RUNNER_CURRICULA: dict[tuple[str, str, int], Curriculum] = {}


def runner_curriculum(env_id: str, option: Any, worker: int) -> Curriculum:
    """The curriculum of env runner ``worker`` in this process (made on first use)."""
    key = (env_id, json.dumps(option, sort_keys=True, default=str), worker)
    if key not in _RUNNER_CURRICULA:
        spec = {} if option is True else dict(option)
        spec["seed"] = int(spec.get("seed", 0)) + worker
        _RUNNER_CURRICULA[key] = Curriculum.from_option(env_id, spec)
    return _RUNNER_CURRICULA[key]


# ---------------------------------------------------------------------- the Ray side


def register(env_ids: list[str] | None = None) -> list[str]:
    """Register each id (default: every id with a discrete mode) with Ray's env registry.

    Under its own name, so ``PPOConfig().environment("MeetingSlot-v0")`` makes the
    wrapped env on every env runner (they import ``meeting_gym`` there: on a cluster,
    install the package on every node). Returns the ids registered.
    """
    require_rllib()
    from ray.tune.registry import register_env

    ids = discrete_env_ids() if env_ids is None else list(env_ids)
    for env_id in ids:
        if env_id not in ENVS:
            raise ValueError(f"unknown env {env_id!r}; registered envs: {', '.join(ENVS)}")
        register_env(env_id, functools.partial(make_env, env_id))
    return ids


def masked_mlp_spec(hidden: tuple[int, ...] = (64, 64)) -> Any:
    """RLlib's own masking module over a plain MLP (actor and critic ``hidden``, tanh).

    The counterpart of SB3's ``MultiInputPolicy`` under MaskablePPO (same layer sizes).
    """
    require_rllib()
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
        ActionMaskingTorchRLModule,
    )

    return RLModuleSpec(
        module_class=ActionMaskingTorchRLModule,
        model_config={
            "fcnet_hiddens": list(hidden),
            "fcnet_activation": "tanh",
            "vf_share_layers": False,
        },
    )


def ppo_config(
    env_id: str,
    module_spec: Any,
    *,
    num_env_runners: int = 0,
    envs_per_env_runner: int = 8,
    train_batch_size: int = 1024,
    minibatch_size: int = 256,
    num_epochs: int = 4,
    lr: float = 1e-3,
    gamma: float = 1.0,
    lambda_: float = 0.95,
    entropy_coeff: float = 0.0,
    seed: int = 0,
    env_config: dict[str, Any] | None = None,
) -> Any:
    """A PPO config on the new API stack with MaskablePPO's settings from the SB3 example.

    8 envs, 1,024 steps per update, minibatches of 256, 4 epochs, ``lr=1e-3``,
    ``gamma=1.0``, GAE 0.95, no entropy bonus, no KL term, gradient norm clipped to
    0.5, value loss weight 0.5; one local learner. ``num_env_runners=0`` samples in
    the driver; the batch per update is the same whatever the number of runners.
    Registers ``env_id`` with Ray's registry first.
    """
    require_rllib()
    from ray.rllib.algorithms.ppo import PPOConfig

    register([env_id])
    return (
        PPOConfig()
        .environment(env_id, env_config=dict(env_config or {}))
        .env_runners(
            num_env_runners=num_env_runners,
            num_envs_per_env_runner=envs_per_env_runner,
            rollout_fragment_length="auto",
        )
        .learners(num_learners=0)
        .training(
            train_batch_size_per_learner=train_batch_size,
            minibatch_size=minibatch_size,
            num_epochs=num_epochs,
            lr=lr,
            gamma=gamma,
            lambda_=lambda_,
            entropy_coeff=entropy_coeff,
            use_kl_loss=False,
            grad_clip=0.5,
            vf_loss_coeff=0.5,
        )
        .rl_module(rl_module_spec=module_spec)
        .debugging(seed=seed)
    )

"""Things that act: the reference policies by name, saved MaskablePPO models and RLlib modules.

Evaluation (:mod:`meeting_gym.evaluation`) and training (:mod:`meeting_gym.training`) lived
here until 0.4.0; their old module names import the new modules, with a
``DeprecationWarning``, until 0.5.0.
"""

from meeting_gym.core.moved import alias_modules

# old name -> new module (0.4.0): evaluation and training each got a package of their own
MOVED = {
    "episodes": "meeting_gym.evaluation.episodes",
    "evaluate": "meeting_gym.evaluation.evaluate",
    "heldout": "meeting_gym.evaluation.heldout",
    "llm": "meeting_gym.evaluation.chat",
    "paired": "meeting_gym.evaluation.paired",
    "passk": "meeting_gym.evaluation.passk",
    "provenance": "meeting_gym.evaluation.provenance",
    "replay": "meeting_gym.evaluation.replay",
    "run_rows": "meeting_gym.evaluation.run_rows",
    "finetune": "meeting_gym.training.finetune",
    "groups": "meeting_gym.training.groups",
    "grpo": "meeting_gym.training.grpo",
    "loss_check": "meeting_gym.training.loss_check",
    "ppo_runs": "meeting_gym.training.ppo_runs",
    "sft": "meeting_gym.training.sft",
    "training": "meeting_gym.training.runs",
    "trl_runs": "meeting_gym.training.trl_runs",
    "rllib": "meeting_gym.agents.rllib_agent",
}

alias_modules(__name__, MOVED, since="0.4.0", until="0.5.0")

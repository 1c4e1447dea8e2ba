"""Deprecated: the loop moved to :mod:`meeting_gym.core.loop` and ``TextPolicyAgent`` to
:mod:`meeting_gym.agents.policies` in 0.3.0 (these aliases go in 0.4.0)."""

from meeting_gym.core.moved import alias_getattr

_loop = alias_getattr(
    __name__, "meeting_gym.core.loop", ("Agent", "AgentError", "Rollout", "play"), depth=1
)
_policies = alias_getattr(__name__, "meeting_gym.agents.policies", ("TextPolicyAgent",), depth=1)


def __getattr__(name: str) -> object:
    return _policies(name) if name == "TextPolicyAgent" else _loop(name)

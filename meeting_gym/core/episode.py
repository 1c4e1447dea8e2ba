"""The episode engine shared by every interface of every environment (no gymnasium here).

An :class:`Episode` holds the task, its item and the item's truth (computed once), the
tool calls made so far and, once answered, the grade. Interfaces translate their
actions into :meth:`Episode.call` and :meth:`Episode.submit`; turns are counted by the env.

The env pays :meth:`Episode.take_reward` after every step. An answer-graded episode pays
its grade's reward once, when it is graded; an episode with a reward per step (a score
delta, as TimetablePlanner's) subclasses this class, pays each step's reward there, and
may end itself without an answer (:attr:`Episode.truncated`, a step budget). Either way
the rewards paid sum to the final grade's reward.
"""

from __future__ import annotations

from typing import Any

from meeting_gym.core.task import Task


class Episode:
    def __init__(self, task: Task[Any, Any], item: Any, truth: Any = None) -> None:
        self.task = task
        self.item = item
        self.truth = task.truth(item) if truth is None else truth
        self.item_id = task.item_id(item)
        self.calls: list[tuple[str, Any, str]] = []
        self.answer: str | None = None
        self.grade: Any = None
        self._paid = False

    @property
    def gold(self) -> str:
        return self.task.gold(self.item, self.truth)

    @property
    def done(self) -> bool:
        return self.grade is not None

    @property
    def truncated(self) -> bool:
        """True once the episode has ended itself without an answer (its own budget ran out).

        Answer-graded episodes never do (the env truncates them after ``max_turns``).
        """
        return False

    def take_reward(self) -> float:
        """The reward earned since the last call (the env pays it on every step).

        Here: the grade's reward once the episode is graded, 0 before and after.
        """
        if self.grade is None or self._paid:
            return 0.0
        self._paid = True
        return float(self.grade.reward)

    def call(self, name: str, arguments: Any) -> str:
        """Run one tool on the hidden item; never raises for bad arguments."""
        toolset = self.task.toolset
        if toolset is None:
            result = f"error: this task has no tools (called {name!r})"
        else:
            result = toolset.call(self.item, name, arguments)
        self.calls.append((name, arguments, result))
        return result

    def submit(self, text: str) -> Any:
        """Grade a final message and end the episode; ``answer`` keeps what was read from it."""
        self.grade, self.answer = self.task.grade(self.item, self.truth, text)
        return self.grade

    def outcome(self) -> dict[str, Any]:
        """The end-of-episode ``info`` entries: every rubric term, ``reward``, gold, answer."""
        grade = self.grade if self.grade is not None else self.task.rubric_for(self.item).zero
        result = grade.as_dict()
        result["gold"] = self.gold
        result["answered"] = self.grade is not None
        result["answer"] = self.answer
        return result

"""The episode engine shared by every interface of every environment (no gymnasium here).

An :class:`Episode` holds the task, its item and the item's truth (computed once), the
tool calls made so far and, once answered, the grade. Interfaces translate their
actions into :meth:`Episode.call` and :meth:`Episode.submit`; turns are counted by the env.
A task names its kind of episode in ``Task.episode_class``; there are two:

* :class:`Episode` (the default) is **answer-graded**: the task's ``gold`` and ``grade``
  judge one final message, and the grade's reward is paid once, when it is graded;
* :class:`StepEpisode` **pays as it goes** (a score delta, penalties: TimetablePlanner):
  each step's reward is paid by :meth:`Episode.take_reward` after that step, the episode
  may end itself without an answer (:attr:`Episode.truncated`, a step budget), and it
  reports its own end-of-episode stats. Its task does not grade final messages.

Either way the rewards paid sum to the final grade's reward. What differs between the two
is said by the class attributes below, which adapters and evaluation tables read from
``task.episode_class``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from meeting_gym.core.task import Task

__all__ = ["Episode", "StepEpisode"]


class Episode:
    """An answer-graded episode: tools, then one final message graded by the task.

    Class attributes (what kind of episode this is, for adapters and tables):

    * ``answers``: an episode ends with an answer block (the task's ``answer_tag``);
      adapters offer an ``answer`` action only when True;
    * ``dense_reward``: rewards come every step (any may be negative) and sum to the
      final ``info["reward"]``;
    * ``action_fields``: the fields of a structured action object the episode plays (its
      text protocol reads it as JSON), so adapters can accept that object field by field;
    * ``stats``: numeric end-of-episode ``info`` entries (besides the rubric terms) that
      evaluation tables average, e.g. ``invalid_actions``;
    * ``truncation_note``: how the evaluation table explains a truncated episode.
    """

    answers: ClassVar[bool] = True
    dense_reward: ClassVar[bool] = False
    action_fields: ClassVar[tuple[str, ...]] = ()
    stats: ClassVar[tuple[str, ...]] = ()
    truncation_note: ClassVar[str] = "scored 0, counted in no answer"

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


class StepEpisode(Episode):
    """An episode that pays as it goes: a subclass plays actions and calls :meth:`pay`.

    It is never graded by a final message (``submit`` refuses); it ends itself, by its own
    rule (a submit action, a budget), and its :meth:`outcome` reports the grade and its
    ``stats``.
    """

    answers: ClassVar[bool] = False
    dense_reward: ClassVar[bool] = True
    truncation_note: ClassVar[str] = "ended by its own budget; scored as it stood"

    def __init__(self, task: Task[Any, Any], item: Any, truth: Any = None) -> None:
        super().__init__(task, item, truth)
        self._unpaid = 0.0

    def pay(self, reward: float) -> None:
        """Add a step's reward to what the env pays after this step."""
        self._unpaid += reward

    def take_reward(self) -> float:
        """Every reward earned since the last call (the env pays it on every step)."""
        reward, self._unpaid = self._unpaid, 0.0
        return reward

    def submit(self, text: str) -> Any:
        raise TypeError(f"a {type(self).__name__} is not graded by a final message")

"""A toy task for tests of the generic core and the adapters: seven weighted terms, one digit.

Neither MeetingSlot nor CalendarMath: a rubric of seven named terms whose weights differ by
difficulty, settings, curated items and a gold policy, as later envs need from the seam.
"""

from __future__ import annotations

from typing import ClassVar

from meeting_gym.agents.policies import Policy
from meeting_gym.core.rubric import Rubric, Term
from meeting_gym.core.task import Setting, Task

NAMES = ("hard", "teacher", "room", "group", "spread", "gaps", "coverage")
WEIGHTS = {
    "easy": (0.4, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1),
    "hard": (0.2, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1),
}


class SevenTerms(Task):
    """Answer a number from 0 to 9; each term is 1 when the digit is right, weights by level."""

    summary = "toy: seven weighted terms"
    difficulties = ("easy", "hard")
    rubric = Rubric(*(Term(name, 1.0) for name in NAMES))
    max_reward = 1.0
    max_turns = 1
    policies: ClassVar[dict[str, str]] = {"gold": "toy_tasks:ToyGold"}
    settings = (Setting("digits", "how many digits to choose from", choices=(5, 10), kind=int),)

    def __init__(self, difficulty=None, digits=10):
        super().__init__(difficulty)
        self.digits = self.check_setting("digits", digits)

    def config(self):
        return {**super().config(), "digits": self.digits}

    def generate(self, rng, difficulty):
        level = difficulty or rng.choice(self.difficulties)
        return (level, rng.randrange(self.digits), rng.random())

    def curated(self):
        return [("easy", 3, 0.5), ("hard", 7, 0.25)]

    def key(self, item):
        return repr(item)

    def load_item(self, value):
        level, digit, draw_ = value
        if level not in self.difficulties or digit not in range(self.digits):
            raise ValueError(f"item: not a toy item: {value!r}")
        return (level, digit, draw_)

    def item_difficulty(self, item):
        return item[0]

    def rubric_for(self, item):
        weights = WEIGHTS[item[0]]
        return Rubric(*(Term(name, w) for name, w in zip(NAMES, weights, strict=True)))

    def truth(self, item):
        return str(item[1])

    def gold(self, item, truth):
        return truth

    def grade(self, item, truth, text):
        right = float(text.strip() == truth)
        return self.rubric_for(item).grade(**dict.fromkeys(NAMES, right)), text.strip()

    def question(self, item):
        return "Which digit?"

    def system_prompt(self):
        return "Reply with one digit."

    def reset_info(self, item):
        return {"digit": item[1]}


class ToyGold(Policy):
    name = "gold"

    def reset(self, observation, info, seed=None, *, env=None):
        self.answer = str(info["digit"])

    def act(self, observation, info=None):
        return self.answer

"""CalendarMath: single-turn calendar arithmetic (add days, count days, name the weekday).

The pure domain of ``CalendarMath-v0``, with no gymnasium or numpy import:
``dates`` (calendar facts, gold, question text), ``items`` (one validated question),
``generator`` (seeded items per difficulty), ``curated`` (the 15 cases of
``devtechedge/calendar-math``, the env this one succeeds), ``answers`` (answer extraction
and scoring) and ``policies`` (gold, naive, random).
"""

from meeting_gym.core.moved import alias_modules

# the env's benchmark plan left the env in 0.4.0: an env stands on core alone
alias_modules(__name__, {"bench": "meeting_gym.bench.calendar_math"}, since="0.4.0", until="0.5.0")

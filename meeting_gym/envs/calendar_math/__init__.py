"""CalendarMath: single-turn calendar arithmetic (add days, count days, name the weekday).

The pure domain of ``CalendarMath-v0``, with no gymnasium or numpy import:
``dates`` (calendar facts, gold, question text), ``items`` (one validated question),
``generator`` (seeded items per difficulty), ``curated`` (the predecessor's 15 cases),
``answers`` (answer extraction and scoring) and ``policies`` (gold, naive, random).
"""

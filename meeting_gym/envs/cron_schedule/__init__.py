"""CronSchedule: write cron expressions from English, and read their next run times.

The pure domain of ``CronSchedule-v0`` and ``CronSchedule-Tools-v0``, with no gymnasium
import: ``expression`` (the parser), ``schedule`` (day rule, exact equivalence, next run
times), ``english`` (descriptions and their reader), ``generator`` (seeded items per
level), ``items``, ``curated``, ``answers`` (answer extraction and scoring), ``tools``
(``next_runs``); ``task`` puts them behind the family's seam (both env ids), ``policies``
holds gold, noop, naive and random (its benchmark rows:
:mod:`meeting_gym.bench.cron_schedule`).
"""

from meeting_gym.core.moved import alias_modules

# the env's benchmark plan left the env in 0.4.0: an env stands on core alone
alias_modules(__name__, {"bench": "meeting_gym.bench.cron_schedule"}, since="0.4.0", until="0.5.0")

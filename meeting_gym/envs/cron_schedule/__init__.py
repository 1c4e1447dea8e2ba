"""CronSchedule: write cron expressions from English, and read their next run times.

The pure domain of ``CronSchedule-v0`` and ``CronSchedule-Tools-v0``, with no gymnasium
import: ``expression`` (the parser), ``schedule`` (day rule, exact equivalence, next run
times), ``english`` (descriptions and their reader), ``generator`` (seeded items per
level), ``items``, ``curated``, ``answers`` (answer extraction and scoring), ``tools``
(``next_runs``); ``task`` puts them behind the family's seam (both env ids), ``policies``
holds gold, noop, naive and random, ``bench`` the env's benchmark rows.
"""

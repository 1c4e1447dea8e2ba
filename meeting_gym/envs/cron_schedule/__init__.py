"""CronSchedule: write cron expressions from English, and read their next run times.

The pure domain of ``CronSchedule-v0`` and ``CronSchedule-Tools-v0``, with no gymnasium
import: ``expression`` (the parser), ``schedule`` (day rule, exact equivalence, next run
times), ``english`` (descriptions and their reader), ``generator`` (seeded items per
level), ``items``, ``curated``, ``answers`` (answer extraction and scoring), ``tools``
(``next_runs``) and ``policies`` (gold, noop, naive, random).
"""

"""TimetablePlanner: build a weekly timetable under teacher, group and room constraints.

The pure domain of ``TimetablePlanner-v0``, with no gymnasium or numpy import:

* ``scenario``: the validated scenario model (:class:`Scenario`, :class:`ScenarioError`);
* ``problem``: a scenario as loaded for play (defaults, disruption, indices);
* ``scoring``: conflict counts, the seven component scores and ``overall_score``, kept
  incrementally by :class:`Timetable`, and the from-scratch :func:`reference_scores`;
* ``actions``: the five actions, parsed and validated with the predecessor's messages;
* ``episode``: the step pipeline (reward = score delta + penalties + submit bonus);
* ``observation``: the predecessor's observation dict;
* ``catalogue``: the 15 hand-crafted scenarios (package data, attributed) and the 8
  generated ids of the predecessor;
* ``generator``: the predecessor's procedural generator, seeded and process-independent.

The rules are the predecessor's (``ajay-sreeram/timetable_planner`` at ``2659ae6``) as
specified in RULES.md, with the defects the issue lists fixed; each fix is named where it
is made (D1, D3, D7, D11, D16, D18).
"""

"""Every bound of the OpenEnv server, with why it has its value (docs/guides/serving.md
lists them). Read as ``limits.NAME`` where they are used, so a test can change one."""

DEFAULT_MAX_SESSIONS = 64
DEFAULT_IDLE_TIMEOUT_S = 300.0
MAX_FRAME_BYTES = 1 << 23
"""The largest WebSocket frame read (8 MiB): room for an action of MAX_ACTION_CHARS
characters even if every one is a JSON escape. A larger frame closes the connection
(code 1009, the WebSocket protocol's "message too big")."""
MAX_HTTP_BODY_BYTES = 1 << 23
"""The largest HTTP request body read (8 MiB); a larger one gets 413, unread."""
MAX_MESSAGE_DEPTH = 64
"""The deepest nesting of lists and objects in one WebSocket message."""
MAX_ERROR_CHARS = 2000
"""What an error reply quotes of a message, an exception or an input, at most."""
EXTRA_CONNECTIONS = 64
"""HTTP requests served at once beside the sessions (``/health`` aside): 503 past it."""
WAITING_CONNECTIONS = 512
"""Connections that may wait for their request head (or sit idle between keep-alive
requests) beside ``max_sessions + EXTRA_CONNECTIONS`` busy ones. Past that many open
connections, the oldest one that has waited HEAD_GRACE_S for its head is closed to make
room (a new one, if none has), so slow clients cannot hold every socket."""
HEAD_GRACE_S = 0.5
"""A connection younger than this is not closed to make room: a client that sends its
request at once (a health probe) is read, however fast slow ones reconnect."""
HEAD_TIMEOUT_S = 5.0
"""Seconds a connection has to send a complete request head, from its opening or from
the end of its previous response: a slow or incomplete request is closed after it."""
MAX_HEAD_BYTES = 1 << 14
"""The largest HTTP request head (16 KiB, h11's own bound on a head still incomplete):
a larger one gets 431 and the connection closes, unparsed."""
MAX_HEADERS = 100
"""The most header lines in one request head: past it, 431 and the connection closes. h11
parsed a head that came in one read whole on the event loop: a ``GET /health`` of 12,000
headers (118 KiB) cost ~40 ms, and 8 clients looping it took other sessions' step p99
from 3.5 to 406 ms."""
REFUSAL_PAUSE_S = 0.25
"""How long a request head refused with 431 waits for its answer (the connection unread):
so a client looping refused heads makes at most four a second per connection."""
BODY_TIMEOUT_S = 20.0
"""Seconds an HTTP request has to send its whole body: past it, 408 and the connection
is closed."""
MAX_INFLIGHT_BYTES = 1 << 25
"""The server-wide budget on message bytes in flight (32 MiB): WebSocket messages and
HTTP bodies over SMALL_MESSAGE_BYTES are counted from their arrival until their reply. A
WebSocket message (of one frame) that would pass it is left unread, its bytes skipped as
they come, and answered ``SERVER_BUSY``, the session going on; an HTTP body gets 503.
Held instead (its connection unread until there was room), 48 sessions x 5 actions of
4 MiB queued 240 s of reading at LARGE_BYTES_PER_S, and no client could tell when."""
MODERATE_MESSAGE_BYTES = 1 << 20
"""A large message of at most this size (1 MiB) from a connection that sent none over
SMALL_MESSAGE_BYTES for FRESH_AFTER_S has the last PRIORITY_ROOM_BYTES of the budget to
itself and is read without pacing (its bytes still count against the rate, so others wait
for them): while 44 sessions streamed 4 MiB actions, a legitimate 332 KiB TimetablePlanner
reset took 32.9 s instead of 0.66 s, queued behind them."""
FRESH_AFTER_S = 10.0
PRIORITY_ROOM_BYTES = 1 << 23
LARGE_BYTES_PER_S = 1 << 22
"""The server-wide rate (4 MiB/s) at which bytes of large messages (over
SMALL_MESSAGE_BYTES) are read; faster, a connection stops being read for a while.
The budget bounds the memory large messages take; this bounds the time. Reading,
decoding and parsing a 4 MiB message holds the interpreter for ~15 ms in a few
uninterruptible pieces, and every session waits behind them: at 40 such messages a
second (48 sessions sending at once) other sessions' step p99 rose 39x."""
LARGE_BURST_BYTES = 1 << 20
"""Bytes of large messages read at once before the rate applies (1 MiB)."""
SMALL_MESSAGE_BYTES = 1 << 16
"""Messages up to this size (64 KiB) are not counted: every ordinary reset and step is
smaller, so a burst of large actions never refuses a well-behaved session."""
LOG_LINES_PER_WINDOW = 20
"""At most this many lines about misbehaving clients per LOG_WINDOW_S (one line per
client); past it the lines are counted, and the count is logged once the window ends."""
LOG_WINDOW_S = 10.0
SWITCH_INTERVAL_S = 0.0001
"""How long a thread of :func:`serve` may hold the interpreter while another waits for it
(Python's default is 5 ms). A long reset (a ``-v0`` eval walk) runs in its session's
worker thread; every other session's step needs the interpreter a few times (the event
loop, its own worker), and waited up to 5 ms each time: during a TimetablePlanner-v0 walk
two sessions made 18 steps in 15 s (p99 2.3 s); at 0.5 ms their p99 was 5.3x the quiet
one, at 0.1 ms 2.5x (``benchmarks/openenv_attacks.py --attack walk``). The walk itself
gets a fairer share, not less work."""
SHUTDOWN_GRACE_S = 1.0
"""Seconds a stop (SIGINT, SIGTERM) waits for requests in progress before it cancels them."""
LOG_NAME = "uvicorn.error"
"""The logger uvicorn writes its errors to; the server's client lines go there too."""
LIGHT_WORK_S = 0.001
"""A session's request runs at once (beside every other) when its dearest recent request
of that kind (reset, step, state, ...) cost at most this much CPU (1 ms: every step and
curated reset of every env is under 0.5 ms); heavier ones take turns in one lane
(:mod:`fair`). 32 sessions looping ~50 ms resets each in its own thread took a quiet
session's step p99 from 2.1 to 554 ms."""
WORK_HALF_LIFE_S = 2.0
"""How fast a session's record of its costs fades (halved every 2 s): a session whose
reset cost 60 ms runs its resets in the heavy lane for ~12 s after, and one that loops
expensive work stays there; its CPU lately (what orders the heavy lane) fades alike."""
HEAVY_TURN_S = 0.25
"""Heavy work running this long no longer keeps the next from starting (a ``-v0`` walk of
28 s does not hold the lane for 28 s) ..."""
HEAVY_RUNNING_MAX = 4
"""... up to this many heavy requests at once."""
LIGHT_TURN_S = 0.001
"""Light work takes turns too, one at a time in kinds' turns (:mod:`fair`): 32 sessions
looping 0.2 ms resets, each at once in its own thread, took a quiet session's step p99 to
20x its quiet one. Light work running this long (1 ms of wall time: a light request that
shares the interpreter with a long walk takes a few) no longer keeps the next from
starting; at 5 ms two quiet sessions' steps beside a TimetablePlanner-v0 walk waited on
each other (p99 3.0-3.6x quiet, against 2.6-2.9x at 1 ms) ..."""
LIGHT_RUNNING_MAX = 8
"""... up to this many at once."""

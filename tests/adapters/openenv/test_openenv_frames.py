"""The frame cursor that lets the server leave a whole WebSocket message unread (issue 50
item 1): what passes is exactly the frames not dropped, in order, however the bytes are cut
into reads, and a dropped message's end is marked where it falls."""

from __future__ import annotations

import os
import random

import pytest

from meeting_gym.adapters.openenv.frames import FrameCursor, header


def frame(opcode: int, payload: bytes, fin: bool = True, masked: bool = True) -> bytes:
    """A client frame as RFC 6455 section 5.2 lays it out."""
    head = bytes([(0x80 if fin else 0) | opcode])
    mask_bit = 0x80 if masked else 0
    if len(payload) < 126:
        head += bytes([mask_bit | len(payload)])
    elif len(payload) < 1 << 16:
        head += bytes([mask_bit | 126]) + len(payload).to_bytes(2, "big")
    else:
        head += bytes([mask_bit | 127]) + len(payload).to_bytes(8, "big")
    if not masked:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


@pytest.mark.parametrize("size", [0, 125, 126, 65535, 65536, 300_000])
def test_header_reads_each_length_form_and_waits_for_a_whole_header(size):
    data = frame(0x1, b"a" * size)
    opcode, fin, head, length = header(data)
    assert (opcode, fin, length) == (0x1, True, size)
    assert len(data) == head + size
    assert header(data[: head - 1]) is None


def messages(draw: random.Random, count: int) -> list[tuple[list[bytes], bool]]:
    """Messages as their frames (some fragmented, with control frames between fragments),
    each with whether it is to be dropped (the large ones)."""
    out = []
    for _ in range(count):
        size = draw.choice([0, 10, 200, 70_000, 150_000])
        payload = os.urandom(size)
        cuts = sorted(draw.sample(range(size + 1), k=min(draw.randrange(3), size + 1)))
        pieces = [payload[a:b] for a, b in zip([0, *cuts], [*cuts, size], strict=True)]
        frames = []
        for k, piece in enumerate(pieces):
            opcode = 0x1 if k == 0 else 0x0
            frames.append(frame(opcode, piece, fin=k == len(pieces) - 1))
            if k < len(pieces) - 1 and draw.random() < 0.5:
                frames.append(frame(0x9, b"ping"))  # a control frame between fragments
        out.append((frames, len(pieces[0]) > 65_536))
    return out


@pytest.mark.parametrize("seed", range(12))
def test_what_passes_is_every_frame_not_dropped_in_order_however_the_reads_fall(seed):
    draw = random.Random(seed)
    sent = messages(draw, 20)
    stream = b"".join(f for frames, _ in sent for f in frames)
    expected: list[bytes | None] = []
    for frames, dropped in sent:
        for f in frames:
            is_control = f[0] & 0x0F >= 0x8
            if not dropped or is_control:
                expected.append(f)
        if dropped:
            expected.append(None)
    asked: list[tuple[int, bool]] = []

    def drop(length: int, fin: bool) -> bool:
        asked.append((length, fin))
        return length > 65_536

    cursor = FrameCursor(drop)
    out: list[bytes | None] = []
    at = 0
    while at < len(stream):
        step = draw.choice([1, 3, 14, 1000, 65_536, 200_000])
        out.extend(cursor.split(stream[at : at + step]))
        at += step

    # the passed bytes, joined between the marks, are the expected frames joined
    def runs(items: list[bytes | None]) -> list[bytes | None]:
        joined: list[bytes | None] = [b""]
        for item in items:
            if item is None:
                joined += [None, b""]
            else:
                joined[-1] += item
        return joined

    assert runs(out) == runs(expected)
    assert len(asked) == len(sent)  # asked once per message, at its first frame
    assert cursor.pending == b"" and cursor.left == 0 and not cursor.dropping


def test_a_dropped_message_s_bytes_are_not_copied_into_what_passes():
    big = frame(0x1, b"x" * 1_000_000)
    small = frame(0x1, b'{"type": "state"}')
    cursor = FrameCursor(lambda length, fin: length > 65_536)
    out = list(cursor.split(small + big + small))
    assert out == [small, None, small]

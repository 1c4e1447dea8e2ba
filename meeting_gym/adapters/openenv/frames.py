"""WebSocket frame boundaries in a client's byte stream, so that a whole message can be
left unread (RFC 6455 section 5.2), without parsing or buffering its payload."""

from __future__ import annotations

from collections.abc import Callable, Iterator

CONTINUATION = 0x0
CONTROL = 0x8  # opcodes from here on (close, ping, pong) are control frames
HEADER_MAX = 14  # 2 bytes, 8 of extended length, 4 of mask


def header(data: bytes | bytearray) -> tuple[int, bool, int, int] | None:
    """``(opcode, fin, header length, payload length)`` of the frame ``data`` starts with,
    or None while its header is incomplete."""
    if len(data) < 2:
        return None
    first, second = data[0], data[1]
    length, size = second & 0x7F, 2
    if length == 126:
        size = 4
    elif length == 127:
        size = 10
    if second & 0x80:  # masked (every client frame is)
        size += 4
    if len(data) < size:
        return None
    if length == 126:
        length = int.from_bytes(data[2:4], "big")
    elif length == 127:
        length = int.from_bytes(data[2:10], "big")
    return first & 0x0F, bool(first & 0x80), size, length


class FrameCursor:
    """Follows the frames of one connection's incoming bytes and drops the messages that
    ``drop(length, fin)`` asks to, whole: asked at each data message's first frame (its
    payload length, whether it is the message's only frame), it returns True to drop that
    frame and the message's continuation frames. Control frames between them pass.

    :meth:`split` gives the bytes to pass on, in order, and ``None`` where a dropped
    message ended. The bytes of a header still incomplete are kept for the next call.
    """

    def __init__(self, drop: Callable[[int, bool], bool]) -> None:
        self.drop = drop
        self.pending = b""  # the start of a header
        self.left = 0  # payload bytes of the current frame still to come
        self.passing = True  # whether the current frame's bytes pass
        self.ends_dropped = False  # the current frame is a dropped message's last
        self.dropping = False  # inside a dropped message (between its frames)

    def split(self, data: bytes) -> Iterator[bytes | None]:
        if self.pending:
            data, self.pending = self.pending + data, b""
        at = 0
        out_from = 0  # where the bytes to pass on start
        while at < len(data):
            if self.left:
                step = min(self.left, len(data) - at)
                if not self.passing and at > out_from:
                    yield data[out_from:at]
                at += step
                self.left -= step
                if not self.passing:
                    out_from = at
                if not self.left and self.ends_dropped:
                    self.ends_dropped = False
                    yield None
                continue
            found = header(data[at : at + HEADER_MAX])
            if found is None:
                if at > out_from:
                    yield data[out_from:at]
                self.pending = bytes(data[at:])
                return
            opcode, fin, size, length = found
            if opcode >= CONTROL:
                self.passing = True
            elif opcode == CONTINUATION:
                self.passing = not self.dropping
                if self.dropping and fin:
                    self.dropping = False
                    self.ends_dropped = True
            else:  # a data message's first frame: what came before it is passed on first
                if at > out_from:
                    yield data[out_from:at]
                    out_from = at
                self.passing = not self.drop(length, fin)
                if not self.passing:
                    self.dropping = not fin
                    self.ends_dropped = fin
            if not self.passing and at > out_from:
                yield data[out_from:at]
            at += size
            self.left = length
            if not self.passing:
                out_from = at
            if not self.left and self.ends_dropped:
                self.ends_dropped = False
                yield None
        if out_from < len(data):
            yield data[out_from:]

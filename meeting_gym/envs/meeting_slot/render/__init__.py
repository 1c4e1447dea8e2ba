"""MeetingSlot's pictures: the ANSI grid (``ansi``) and the RGB frame (``picture``)."""

"""MeetingSlot's torch networks (the pointer head) for SB3 and RLlib; torch only here."""

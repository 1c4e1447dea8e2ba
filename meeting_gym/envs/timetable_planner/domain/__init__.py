"""TimetablePlanner's rules in pure Python (no gymnasium, no numpy); see the package doc."""

"""Pillow for the envs' ``rgb_array`` pictures, imported only when a picture is drawn."""

from __future__ import annotations

from functools import cache
from typing import Any

from gymnasium.error import DependencyNotInstalled

INSTALL_HINT = 'pip install "meeting-gym[render]"'


def require_pillow(needed_by: str = "rgb_array rendering needs it") -> Any:
    """Pillow's ``(Image, ImageDraw, ImageFont)``, or ``DependencyNotInstalled`` with the
    install line (``needed_by`` says what needs it)."""
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError as error:
        raise DependencyNotInstalled(
            f"Pillow is not installed; {needed_by}: {INSTALL_HINT}"
        ) from error
    return Image, ImageDraw, ImageFont


@cache
def font(size: int) -> Any:
    """Pillow's bundled scalable font (no system fonts)."""
    return require_pillow()[2].load_default(size=size)

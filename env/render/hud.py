"""The 2D overlay as an RGBA image: info text top-left, the critic-value plot top-right.

Drawn with Pillow (imageio depends on it) and its built-in font, then blended over the 3D view.
The plot shows the value the agent logs every control step (critic value x (1 - gamma), so about
[0, 1] for rewards in [0, 1]) on a fixed [0, 1] axis, newest sample at the right.
"""
import numpy as np
from PIL import Image, ImageDraw, ImageFont

FONT_SIZE = 14
TEXT_COLOR = (20, 20, 20, 255)
PANEL_COLOR = (255, 255, 255, 150)
PLOT_SIZE = (240, 90)
PLOT_MARGIN = 10
PLOT_SAMPLES = 150       # 5 s of 30 Hz decisions
PLOT_LINE = (40, 90, 200, 255)
PLOT_RANGE = (0.0, 1.0)


class Hud:
    def __init__(self, width, height):
        self.width, self.height = width, height
        self.font = ImageFont.load_default(FONT_SIZE)

    def render(self, lines, values=None):
        """(height, width, 4) uint8 straight-alpha image of the text lines and the value plot."""
        image = Image.new("RGBA", (self.width, self.height), (0, 0, 0, 0))
        draw = ImageDraw.Draw(image)
        self._draw_text(draw, lines)
        if values is not None:
            self._draw_plot(draw, values)
        return np.asarray(image)

    def _draw_text(self, draw, lines):
        if not lines:
            return
        line_h = FONT_SIZE + 4
        text_w = max(draw.textlength(line, font=self.font) for line in lines)
        draw.rectangle([4, 4, 14 + text_w, 10 + line_h * len(lines)], fill=PANEL_COLOR)
        for i, line in enumerate(lines):
            draw.text((9, 7 + i * line_h), line, font=self.font, fill=TEXT_COLOR)

    def plot_rect(self):
        """(left, top, right, bottom) of the plot box in pixels."""
        right = self.width - PLOT_MARGIN
        return right - PLOT_SIZE[0], PLOT_MARGIN, right, PLOT_MARGIN + PLOT_SIZE[1]

    def _draw_plot(self, draw, values):
        left, top, right, bottom = self.plot_rect()
        draw.rectangle([left, top, right, bottom], fill=PANEL_COLOR, outline=(60, 60, 60, 255))
        draw.text((left + 4, top + 2), "Value", font=self.font, fill=TEXT_COLOR)
        values = np.asarray(values, dtype=float)[-PLOT_SAMPLES:]
        if len(values) < 2:
            return
        lo, hi = PLOT_RANGE
        frac = np.clip((values - lo) / (hi - lo), 0.0, 1.0)
        xs = right - (len(values) - 1 - np.arange(len(values))) * (right - left) / (PLOT_SAMPLES - 1)
        ys = bottom - frac * (bottom - top)
        draw.line(list(zip(xs.tolist(), ys.tolist())), fill=PLOT_LINE, width=2)

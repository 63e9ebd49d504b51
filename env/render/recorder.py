"""Where headless frames go: a video file (imageio + ffmpeg) or a folder of numbered PNGs.

Every file appears atomically: a video is written under a temporary name and renamed when
closed, each PNG likewise.
"""
from pathlib import Path

import imageio.v2 as imageio

from util.atomic_write import atomic_path, replace_with, temp_path_beside

VIDEO_SUFFIXES = {".mp4", ".mkv", ".mov", ".avi", ".webm"}
FPS = 60


def write_png(path, image):
    with atomic_path(path) as tmp:
        imageio.imwrite(tmp, image)


class VideoSink:
    def __init__(self, path, fps=FPS):
        self.path = Path(path)
        self.tmp = temp_path_beside(self.path)
        self.writer = imageio.get_writer(self.tmp, fps=fps, macro_block_size=1, quality=7)
        self.count = 0

    def add(self, image):
        self.writer.append_data(image)
        self.count += 1

    def close(self):
        self.writer.close()
        replace_with(self.tmp, self.path)


class PngFolderSink:
    def __init__(self, folder):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.count = 0

    def add(self, image):
        write_png(self.folder / f"frame_{self.count:06d}.png", image)
        self.count += 1

    def close(self):
        pass


def open_sink(path):
    """A video sink for a known video suffix, else a PNG folder at `path`."""
    if Path(path).suffix.lower() in VIDEO_SUFFIXES:
        return VideoSink(path)
    return PngFolderSink(path)

"""A perspective camera looking at a focus point, with DeepMimic's tracking modes.

Conventions: y is up; matrices are 4x4 numpy arrays acting on column vectors (OpenGL's); pixel
coordinates have (0, 0) at the top-left corner of the image, x to the right, y down, and pixel
(i, j)'s centre at (i + 0.5, j + 0.5).

Tracking (`--cam_track_mode`, as DeepMimic): `xz` (default) moves the camera with the character
horizontally, `y` vertically, `xyz` in all directions, `still` never moves, `fixed` keeps the
camera's position and turns it to look at the character. The camera moves by the character's
displacement since the last frame, so a pan or zoom made by the user is kept.
"""
import numpy as np

TRACK_MODES = ("xz", "y", "xyz", "still", "fixed")
_TRACK_AXES = {"xz": (1.0, 0.0, 1.0), "y": (0.0, 1.0, 0.0), "xyz": (1.0, 1.0, 1.0)}

FOV_Y_DEG = 45.0
NEAR, FAR = 0.05, 200.0
MIN_DIST = 0.3
ZOOM_FACTOR = 0.9       # distance multiplier per wheel step towards the focus
ORBIT_RAD_PER_PX = 0.005


def look_at(eye, focus, up):
    forward = focus - eye
    forward = forward / np.linalg.norm(forward)
    side = np.cross(forward, up)
    side = side / np.linalg.norm(side)
    true_up = np.cross(side, forward)
    view = np.eye(4)
    view[0, :3], view[1, :3], view[2, :3] = side, true_up, -forward
    view[:3, 3] = -view[:3, :3] @ eye
    return view


def perspective(fov_y_deg, aspect, near, far):
    f = 1.0 / np.tan(np.radians(fov_y_deg) / 2)
    proj = np.zeros((4, 4))
    proj[0, 0] = f / aspect
    proj[1, 1] = f
    proj[2, 2] = (far + near) / (near - far)
    proj[2, 3] = 2 * far * near / (near - far)
    proj[3, 2] = -1.0
    return proj


class Camera:
    def __init__(self, position, focus, width, height, track_mode="xz"):
        if track_mode not in TRACK_MODES:
            raise ValueError(f"--cam_track_mode: unknown mode {track_mode!r} ({', '.join(TRACK_MODES)})")
        self.position = np.asarray(position, dtype=float)
        self.focus = np.asarray(focus, dtype=float)
        self.up = np.array([0.0, 1.0, 0.0])
        self.width, self.height = width, height
        self.track_mode = track_mode
        self._last_target = self.focus.copy()

    @classmethod
    def side_view(cls, focus, width, height, track_mode="xz", distance=3.5, elevation=0.5):
        """Looking at `focus` from `distance` along +z, raised by `elevation` (DeepMimic's view)."""
        focus = np.asarray(focus, dtype=float)
        return cls(focus + [0.0, elevation, distance], focus, width, height, track_mode)

    def view_matrix(self):
        return look_at(self.position, self.focus, self.up)

    def proj_matrix(self):
        return perspective(FOV_Y_DEG, self.width / self.height, NEAR, FAR)

    def view_proj(self):
        return self.proj_matrix() @ self.view_matrix()

    def project(self, points):
        """World points (..., 3) -> pixel coordinates (..., 2) and NDC depth (...)."""
        points = np.asarray(points, dtype=float)
        homog = np.concatenate([points, np.ones(points.shape[:-1] + (1,))], axis=-1)
        clip = homog @ self.view_proj().T
        ndc = clip[..., :3] / clip[..., 3:4]
        px = (ndc[..., 0] + 1) * 0.5 * self.width
        py = (1 - ndc[..., 1]) * 0.5 * self.height
        return np.stack([px, py], axis=-1), ndc[..., 2]

    def screen_ray(self, px, py):
        """Origin and unit direction of the ray through pixel coordinates (px, py)."""
        inv = np.linalg.inv(self.view_proj())
        ndc_x = 2 * px / self.width - 1
        ndc_y = 1 - 2 * py / self.height
        far = inv @ np.array([ndc_x, ndc_y, 1.0, 1.0])
        far = far[:3] / far[3]
        direction = far - self.position
        return self.position.copy(), direction / np.linalg.norm(direction)

    def _view_axes(self):
        view = self.view_matrix()
        return view[0, :3], view[1, :3], -view[2, :3]  # side, up, forward

    def pixel_size_at_focus(self):
        """World length of one pixel at the focus distance."""
        dist = np.linalg.norm(self.focus - self.position)
        return 2 * dist * np.tan(np.radians(FOV_Y_DEG) / 2) / self.height

    def pan(self, dx_px, dy_px):
        """Moves camera and focus so the scene follows a mouse drag of (dx, dy) pixels."""
        side, up, _ = self._view_axes()
        delta = self.pixel_size_at_focus() * (-dx_px * side + dy_px * up)
        self.position += delta
        self.focus += delta

    def zoom(self, steps):
        """Positive steps move towards the focus (distance x 0.9 per step), never closer than 0.3."""
        offset = self.position - self.focus
        dist = np.linalg.norm(offset)
        new_dist = max(dist * ZOOM_FACTOR ** steps, MIN_DIST)
        self.position = self.focus + offset * (new_dist / dist)

    def orbit(self, dx_px, dy_px):
        """Turns the camera about the focus: yaw about y by dx, pitch by dy (kept off the poles)."""
        offset = self.position - self.focus
        dist = np.linalg.norm(offset)
        yaw = np.arctan2(offset[0], offset[2]) - dx_px * ORBIT_RAD_PER_PX
        pitch = np.arcsin(np.clip(offset[1] / dist, -1, 1)) + dy_px * ORBIT_RAD_PER_PX
        pitch = np.clip(pitch, -1.4, 1.4)
        self.position = self.focus + dist * np.array(
            [np.cos(pitch) * np.sin(yaw), np.sin(pitch), np.cos(pitch) * np.cos(yaw)])

    def track(self, target):
        """Follows `target` (the scene's camera focus) according to the track mode."""
        target = np.asarray(target, dtype=float)
        if self.track_mode == "fixed":
            self.focus = target.copy()
        elif self.track_mode in _TRACK_AXES:
            delta = (target - self._last_target) * _TRACK_AXES[self.track_mode]
            self.position += delta
            self.focus += delta
        self._last_target = target.copy()

"""DeepMimic.py's viewer logic, free of any window: the frame clock, keys, mouse, what to draw.

The window loop (or the headless recorder) calls `tick()` every `tick_interval()` seconds and
draws `frame()` with `camera` and `hud_content()`; input arrives as `keyboard(key)`,
`special_key(name)` (keys that type no character: 'escape', the arrows), `mouse_button(...)`,
`mouse_move(...)`, `scroll(...)`, so tests feed events directly.

Arrow keys steer a scene with a target heading (heading_amp): left/right turn the target heading by
HEADING_STEP, up/down change the target speed by TARGET_SPEED_STEP (the scene keeps it in its
range); the first press makes the target the user's, with no more random changes
(Scene.steer_target). Other scenes ignore them.

A goal-setting agent (AgentType Goals) shows its current goal: a HUD line and a sphere in the
goal's colour above the character. Digit key d holds goal d in test episodes (the agent's
held_goal, as DeepMimic.py's --hold_goal d); pressing it again hands the choice back to the goal
policy.

Timing (deepmimic.md section 1): one frame is app.rollout.update_world's (1/60 s in
num_update_substeps updates, each followed by the episode checks: an invalid episode resets, an
episode end ends and resets; the frame stops there). Each tick runs int(|speed|) frames (at
least 1); below speed 1 the ticks come further apart (interval = frames / |speed| / 60 s). A
negative speed plays backwards. A left-drag force is handed to the scene before every update.
"""
import math
from collections import deque

import numpy as np

from app.rollout import WorldHooks, update_world
from env.env import FRAME_TIME
from env.render.camera import Camera
from env.render.draw_list import build_frame
from env.render.picking import pick
from learning.agents.goals_agent import GoalsAgent
from util.atomic_write import write_json
from util.math_util import quat_identity

SPEED_STEP = 0.05
HEADING_STEP = math.radians(15.0)     # target heading turned per arrow-key press
TARGET_SPEED_STEP = 0.5               # target speed (m/s) changed per arrow-key press
UI_FORCE_SCALE = 1000.0      # N per metre of mouse drag (character units)
TRACE_LEN = 600              # frames kept per traced point
TRACE_COLORS = [(0.8, 0.2, 0.2, 1.0), (0.2, 0.6, 0.2, 1.0), (0.2, 0.3, 0.8, 1.0),
                (0.8, 0.6, 0.1, 1.0), (0.6, 0.2, 0.7, 1.0)]
CHAR_STATE_FILE = "output/char_state.json"
GOAL_COLORS = [(0.9, 0.25, 0.2, 1.0), (0.2, 0.7, 0.3, 1.0), (0.2, 0.4, 0.9, 1.0), (0.95, 0.75, 0.1, 1.0),
               (0.7, 0.3, 0.8, 1.0), (0.1, 0.75, 0.8, 1.0)]
GOAL_MARKER_HEIGHT = 1.0     # metres above the camera focus (the character's root)
GOAL_MARKER_SIZE = 0.15      # sphere diameter, metres


class Viewer:
    def __init__(self, build_world, width, height, track_mode="xz"):
        """`build_world()` returns a fresh RLWorld (called again by the reload key `l`)."""
        self.build_world = build_world
        self.width, self.height = width, height
        self.track_mode = track_mode
        self.animating = True
        self.playback_speed = 1.0
        self.draw_ref = True
        self.traces = None           # list of deques of points while tracing (key y)
        self.quit = False
        self.drag = None             # ('force', body_id, local point, depth) or ('orbit',) or ('pan',)
        self.mouse = np.zeros(2)
        self.world = None
        self._load_world()

    def _load_world(self):
        if self.world is not None:
            self.world.shutdown()
        self.world = self.build_world()
        self.world.reset()   # the first episode in the world's mode (test limits when not training)
        self.drag = None
        self.scene = self.world.env     # the env is the scene: its drawing and interaction hooks
        self.camera = Camera.side_view(self.scene.camera_focus(), self.width, self.height,
                                       self.track_mode)
        if self.traces is not None:
            self.traces = []

    # ---- time ---------------------------------------------------------------------------

    def num_frames_per_tick(self):
        return max(1, abs(int(self.playback_speed)))

    def tick_interval(self):
        """Seconds between ticks; inf at speed 0 (nothing moves)."""
        if self.playback_speed == 0:
            return float("inf")
        return FRAME_TIME * self.num_frames_per_tick() / abs(self.playback_speed)

    def tick(self):
        if self.animating:
            dt = FRAME_TIME if self.playback_speed >= 0 else -FRAME_TIME
            for _ in range(self.num_frames_per_tick()):
                self.step(dt)

    def step(self, dt):
        """One frame of dt (with the drag force before every update), camera tracking and traces."""
        update_world(self.world, dt, DragHooks(self))
        self.camera.track(self.scene.camera_focus())
        if self.traces is not None:
            self._record_traces()

    # ---- keys ---------------------------------------------------------------------------

    def keyboard(self, key):
        """DeepMimic's keys; `key` is the typed character ('\\x1b' for Esc)."""
        action = {
            "\x1b": self._quit, " ": self._toggle_animate,
            ">": lambda: self._step_once(FRAME_TIME), "<": lambda: self._step_once(-FRAME_TIME),
            ".": lambda: self._change_speed(SPEED_STEP), ",": lambda: self._change_speed(-SPEED_STEP),
            "/": self._reset_speed, "l": self._load_world, "r": self.world.reset,
            "t": self._toggle_training, "k": self._toggle_ref,
            "x": lambda: self.scene.throw_projectile(False), "z": lambda: self.scene.throw_projectile(True),
            "s": self.dump_char_state, "y": self._toggle_trace,
        }.get(key)
        if action is not None:
            action()
        elif key.isdigit():
            self._toggle_held_goal(int(key))

    def special_key(self, name):
        """A key that types no character: 'escape' quits, the arrows steer the scene's target."""
        action = {
            "escape": self._quit,
            "left": lambda: self.scene.steer_target(HEADING_STEP, 0.0),
            "right": lambda: self.scene.steer_target(-HEADING_STEP, 0.0),
            "up": lambda: self.scene.steer_target(0.0, TARGET_SPEED_STEP),
            "down": lambda: self.scene.steer_target(0.0, -TARGET_SPEED_STEP),
        }.get(name)
        if action is not None:
            action()

    def _quit(self):
        self.quit = True

    def _toggle_animate(self):
        self.animating = not self.animating

    def _step_once(self, dt):
        self.step(dt)
        self.animating = False

    def _change_speed(self, delta):
        self.playback_speed = round(self.playback_speed + delta, 2)

    def _reset_speed(self):
        self.playback_speed = 1.0

    def _toggle_training(self):
        self.world.set_enable_training(not self.world.enable_training)

    def _toggle_ref(self):
        self.draw_ref = not self.draw_ref

    def _goals_agent(self):
        agent = self.world.agents[0] if self.world.agents else None
        return agent if isinstance(agent, GoalsAgent) else None

    def _toggle_held_goal(self, goal):
        agent = self._goals_agent()
        if agent is not None and goal < agent.num_goals:
            agent.held_goal = None if agent.held_goal == goal else goal

    def _toggle_trace(self):
        self.traces = None if self.traces is not None else []

    def dump_char_state(self, path=CHAR_STATE_FILE):
        """Writes every character's body positions and rotations (and each agent's state vector)."""
        env = self.world.env
        state = {
            "time": env.get_time(),
            "characters": [{"kind": kind, "body_pos": pos.tolist(), "body_rot": rot.tolist()}
                           for _, pos, rot, kind in self.scene.draw_characters()],
            "agent_states": [env.record_state(i).tolist() for i in range(env.get_num_agents())],
        }
        write_json(path, state)
        print(f"character state written to {path}")

    # ---- window events (render_process.py) ------------------------------------------------

    def handle_event(self, event):
        kind, *args = event
        if kind == "char":
            self.keyboard(args[0])
        elif kind == "key":
            self.special_key(args[0])
        elif kind == "mouse_button":
            self.mouse_button(*args)
        elif kind == "cursor":
            self.mouse_move(*args)
        elif kind == "scroll":
            self.scroll(args[0])
        elif kind == "resize":
            self.width, self.height = args
            self.camera.width, self.camera.height = args
        elif kind == "close":
            self.quit = True

    # ---- mouse --------------------------------------------------------------------------

    def mouse_button(self, button, pressed, x, y):
        """button: 'left' | 'right'; (x, y) in pixels from the top-left corner."""
        self.mouse = np.array([x, y], dtype=float)
        if not pressed:
            self.drag = None
        elif button == "right":
            self.drag = ("pan",)
        elif button == "left":
            self.drag = self._grab_body(x, y) or ("orbit",)

    def _grab_body(self, x, y):
        """The drag of the body under (x, y) when the scene simulates a character (forces act on
        simulated bodies only), else None."""
        if not any(kind == "sim" for *_, kind in self.scene.draw_characters()):
            return None
        origin, direction = self.camera.screen_ray(x, y)
        hit = pick(self.frame().solids, origin, direction)
        if hit is None:
            return None
        solid, point = hit
        local = solid.model[:3, :3].T @ (point - solid.model[:3, 3])
        depth = (point - self.camera.position) @ self._forward()
        return ("force", solid.body_id, local, depth)

    def _forward(self):
        forward = self.camera.focus - self.camera.position
        return forward / np.linalg.norm(forward)

    def mouse_move(self, x, y):
        delta = np.array([x, y], dtype=float) - self.mouse
        self.mouse = np.array([x, y], dtype=float)
        if self.drag is None:
            return
        if self.drag[0] == "pan":
            self.camera.pan(*delta)
        elif self.drag[0] == "orbit":
            self.camera.orbit(*delta)

    def scroll(self, steps):
        self.camera.zoom(steps)

    def drag_force(self):
        """(body_id, force, world point) of the left-drag force, or None when not dragging a body."""
        if self.drag is None or self.drag[0] != "force":
            return None
        _, body_id, local, depth = self.drag
        solid = next(s for s in self.frame().solids if s.body_id == body_id)
        anchor = solid.model[:3, :3] @ local + solid.model[:3, 3]
        origin, direction = self.camera.screen_ray(*self.mouse)
        target = origin + direction * depth / (direction @ self._forward())
        return body_id, UI_FORCE_SCALE * (target - anchor), anchor

    def apply_drag_force(self):
        force = self.drag_force()
        if force is not None:
            self.scene.apply_force(*force)

    # ---- drawing ------------------------------------------------------------------------

    def frame(self):
        traces = [(np.array(points), TRACE_COLORS[i % len(TRACE_COLORS)])
                  for i, points in enumerate(self.traces or [])]
        solids, lines = self.scene.draw_task_objects()
        return build_frame(self.scene.draw_characters(), self.scene.draw_projectiles(),
                           self.draw_ref, traces, (list(solids) + self._goal_marker(), lines))

    def _goal_marker(self):
        """A goal-setting agent's current goal as a sphere in its colour above the character."""
        agent = self._goals_agent()
        if agent is None:
            return []
        pos = self.scene.camera_focus() + np.array([0.0, GOAL_MARKER_HEIGHT, 0.0])
        return [("sphere", np.full(3, GOAL_MARKER_SIZE), pos, quat_identity(),
                 GOAL_COLORS[agent.goal_id % len(GOAL_COLORS)])]

    def _traced_points(self):
        """Root and end-effector positions of the first simulated (else kinematic) character."""
        characters = self.scene.draw_characters()
        desc, body_pos, _, _ = next((c for c in characters if c[3] == "sim"), characters[0])
        ids = [0] + [j.id for j in desc.joints if j.is_end_effector]
        return body_pos[ids]

    def _record_traces(self):
        points = self._traced_points()
        if not self.traces:
            self.traces = [deque(maxlen=TRACE_LEN) for _ in points]
        for trace, point in zip(self.traces, points):
            trace.append(point.copy())

    def hud_content(self):
        """(text lines, plotted values or None): the value plot only when the world has agents."""
        has_agents = self.world.env.get_num_agents() > 0
        return self.hud_lines(), (list(self.scene.val_log) if has_agents else None)

    def hud_lines(self):
        env = self.world.env
        speed = f"Playback speed: {self.playback_speed:.2f}x" + ("" if self.animating else "  (paused)")
        lines = [f"Time: {env.get_time():.2f} s", speed]
        agent = self.world.agents[0] if self.world.agents else None
        if agent is not None:
            lines += [f"Mode: {'train' if agent.enable_training else 'test'}",
                      f"Return: {sum(agent.path.rewards):.2f}"]
        goals_agent = self._goals_agent()
        if goals_agent is not None:
            how = (f"held, key {goals_agent.held_goal} releases it" if goals_agent.held_goal is not None
                   else "digit keys hold one")
            lines.append(f"Goal: {goals_agent.goal_id} (goals 0-{goals_agent.num_goals - 1}; {how})")
        return lines + self.scene.hud_lines()


class DragHooks(WorldHooks):
    """The viewer's rollout hooks: the left-drag force before every update."""

    each_update = True

    def __init__(self, viewer):
        super().__init__(viewer.world)
        self.viewer = viewer

    def before_update(self, timestep):
        self.viewer.apply_drag_force()

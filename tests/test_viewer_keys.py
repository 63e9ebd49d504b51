"""The viewer's keys, mouse and frame clock, driven by feeding events (no window), on the
kin_char scene (motion playback), the imitate scene without an agent (physics hooks) and the
heading_amp scene (the arrow keys steer its target; headless evaluation keeps it random)."""
import json

import numpy as np
import pytest

from app.build import load_world
from app.rollout import update_world
from app.viewer import Viewer
from env.env import FRAME_TIME

HEAD, CHEST = 2, 1
KIN_CHAR = ["--arg_file", "args/kin_char_args.txt"]
IMITATE_NO_AGENT = ["--arg_file", "args/run_humanoid3d_walk_wheel_args.txt", "--agent_files", "none",
                    "--model_files", "none"]


def make_viewer(argv):
    return Viewer(lambda: load_world(argv), 800, 450)


@pytest.fixture
def viewer():
    viewer = make_viewer(KIN_CHAR + ["--num_update_substeps", "4"])
    yield viewer
    viewer.world.shutdown()


@pytest.fixture
def sim_viewer():
    viewer = make_viewer(IMITATE_NO_AGENT)
    yield viewer
    viewer.world.shutdown()


def env_time(viewer):
    return viewer.world.env.get_time()


def body_pos(viewer):
    return viewer.scene.draw_characters()[0][1].copy()


def test_tick_runs_one_frame_in_substeps(viewer, monkeypatch):
    env = viewer.world.env
    steps = []
    advance = env.advance
    monkeypatch.setattr(env, "advance", lambda dt, max_updates: (steps.append((dt, max_updates)),
                                                                 advance(dt, max_updates))[1])
    viewer.tick()
    assert steps == pytest.approx([(FRAME_TIME / 4, 1)] * 4)      # one update per call: the drag force
    assert env_time(viewer) == pytest.approx(FRAME_TIME)


def test_pause_stops_time(viewer):
    viewer.tick()
    viewer.keyboard(" ")
    t, pos = env_time(viewer), body_pos(viewer)
    for _ in range(5):
        viewer.tick()
    assert env_time(viewer) == t and np.array_equal(body_pos(viewer), pos)
    viewer.keyboard(" ")
    viewer.tick()
    assert env_time(viewer) == pytest.approx(t + FRAME_TIME)


def test_single_step_forward_and_back(viewer, monkeypatch):
    viewer.tick()
    t = env_time(viewer)
    viewer.keyboard(">")
    assert not viewer.animating
    assert env_time(viewer) == pytest.approx(t + FRAME_TIME)
    viewer.tick()                                  # paused after a step
    assert env_time(viewer) == pytest.approx(t + FRAME_TIME)
    steps = []
    monkeypatch.setattr(viewer.world.env, "advance", lambda dt, max_updates: steps.append((dt, max_updates)) or 1)
    viewer.keyboard("<")                           # a frame backwards; the scene decides what it means
    assert steps == pytest.approx([(-FRAME_TIME / 4, 1)] * 4) and not viewer.animating


def test_playback_speed_keys_and_clock(viewer):
    viewer.keyboard(".")
    assert viewer.playback_speed == 1.05
    viewer.keyboard(",")
    viewer.keyboard(",")
    assert viewer.playback_speed == 0.95
    viewer.keyboard("/")
    assert viewer.playback_speed == 1.0
    assert viewer.tick_interval() == pytest.approx(FRAME_TIME)
    for _ in range(30):
        viewer.keyboard(".")                       # 2.5x: 2 frames per tick, 2/2.5 frame apart
    assert viewer.playback_speed == 2.5
    assert viewer.num_frames_per_tick() == 2
    assert viewer.tick_interval() == pytest.approx(2 * FRAME_TIME / 2.5)
    t = env_time(viewer)
    viewer.tick()
    assert env_time(viewer) == pytest.approx(t + 2 * FRAME_TIME)
    viewer.keyboard("/")
    for _ in range(10):
        viewer.keyboard(",")                       # 0.5x: one frame every 2 frame times
    assert viewer.num_frames_per_tick() == 1
    assert viewer.tick_interval() == pytest.approx(2 * FRAME_TIME)


def test_reset_restores_start_state(viewer):
    start = body_pos(viewer)
    for _ in range(20):
        viewer.tick()
    assert not np.allclose(body_pos(viewer), start)
    viewer.keyboard("r")
    assert env_time(viewer) == 0.0
    assert np.allclose(body_pos(viewer), start)


def test_reload_builds_a_new_world(viewer):
    old = viewer.world
    viewer.tick()
    viewer.keyboard("l")
    assert viewer.world is not old and env_time(viewer) == 0.0


def test_toggles_reference_trace_and_quit(viewer):
    viewer.keyboard("k")
    assert not viewer.draw_ref
    viewer.keyboard("y")
    for _ in range(3):
        viewer.tick()
    lines = viewer.frame().lines
    assert len(lines) == 5 and all(len(points) == 3 for points, _ in lines)   # root + 4 end effectors
    viewer.keyboard("y")
    assert viewer.frame().lines == []
    viewer.keyboard("\x1b")
    assert viewer.quit


def test_training_toggle_reaches_the_world(viewer):
    assert viewer.world.enable_training
    viewer.keyboard("t")
    assert not viewer.world.enable_training
    viewer.keyboard("t")
    assert viewer.world.enable_training


def test_dump_char_state(viewer, tmp_path):
    path = tmp_path / "state.json"
    viewer.dump_char_state(path)
    state = json.loads(path.read_text())
    assert np.allclose(state["characters"][0]["body_pos"], body_pos(viewer))


def test_reference_hidden_with_k_in_a_physics_scene(sim_viewer):
    kinds = [kind for *_, kind in sim_viewer.scene.draw_characters()]
    assert kinds == ["sim", "kin"]
    assert len(sim_viewer.frame().translucent) == 15
    sim_viewer.keyboard("k")
    assert sim_viewer.frame().translucent == [] and len(sim_viewer.frame().solids) == 15


def test_projectile_keys(sim_viewer):
    sim_viewer.keyboard("x")
    sim_viewer.keyboard("z")
    sizes = [size[0] for size, _, _ in sim_viewer.scene.draw_projectiles()]
    assert len(sizes) == 2 and sizes[0] < sizes[1]                  # small, then big
    assert sum(s.body_id < 0 for s in sim_viewer.frame().solids) == 2


def test_keys_needing_physics_are_ignored_in_kin_char(viewer):
    viewer.keyboard("x")
    viewer.keyboard("z")
    assert viewer.scene.draw_projectiles() == []


def test_mouse_wheel_and_right_drag(viewer):
    cam = viewer.camera
    dist = np.linalg.norm(cam.position - cam.focus)
    viewer.scroll(1)
    assert np.linalg.norm(cam.position - cam.focus) == pytest.approx(0.9 * dist)
    focus = cam.focus.copy()
    viewer.mouse_button("right", True, 400, 200)
    viewer.mouse_move(450, 200)
    viewer.mouse_button("right", False, 450, 200)
    assert cam.focus[0] < focus[0]                 # dragging right moves the view left
    moved = cam.focus.copy()
    viewer.mouse_move(600, 300)                    # no button: nothing moves
    assert np.allclose(cam.focus, moved)


def chest_after_drag(viewer, drag_px):
    """Grabs the chest, drags it sideways by drag_px pixels for 10 frames; the chest's position."""
    chest = body_pos(viewer)[CHEST]
    (cx, cy), _ = viewer.camera.project(chest)
    viewer.mouse_button("left", True, cx, cy)
    viewer.mouse_move(cx + drag_px, cy)
    for _ in range(10):
        viewer.tick()
    viewer.mouse_button("left", False, cx + drag_px, cy)
    return body_pos(viewer)[CHEST]


def test_left_drag_pulls_the_grabbed_body(sim_viewer):
    head = body_pos(sim_viewer)[HEAD]
    (hx, hy), _ = sim_viewer.camera.project(head)
    sim_viewer.mouse_button("left", True, hx, hy)
    body_id, force, point = sim_viewer.drag_force()
    assert body_id == HEAD and np.allclose(force, 0, atol=1e-6)
    assert np.linalg.norm(point - head) == pytest.approx(0.205 / 2)
    sim_viewer.mouse_move(hx, hy - 40)
    _, force, _ = sim_viewer.drag_force()
    assert force[1] > 0 and abs(force[0]) < 1e-6 * force[1]
    sim_viewer.mouse_button("left", False, hx, hy - 40)
    assert sim_viewer.drag_force() is None
    sim_viewer.keyboard("r")
    free = chest_after_drag(sim_viewer, 0)
    sim_viewer.keyboard("r")
    pulled = chest_after_drag(sim_viewer, 80)                        # about 0.3 m to the right
    assert pulled[0] > free[0] + 0.02


def test_left_drag_off_the_body_orbits(viewer):
    position = viewer.camera.position.copy()
    viewer.mouse_button("left", True, 20, 400)
    assert viewer.drag == ("orbit",)
    viewer.mouse_move(60, 400)
    assert not np.allclose(viewer.camera.position, position)


def test_window_events_reach_the_viewer(viewer):
    viewer.handle_event(("char", ">"))
    assert not viewer.animating and env_time(viewer) == pytest.approx(FRAME_TIME)
    dist = np.linalg.norm(viewer.camera.position - viewer.camera.focus)
    viewer.handle_event(("scroll", -1.0))
    assert np.linalg.norm(viewer.camera.position - viewer.camera.focus) == pytest.approx(dist / 0.9)
    viewer.handle_event(("mouse_button", "right", True, 400.0, 200.0))
    assert viewer.drag == ("pan",)
    viewer.handle_event(("resize", 640, 480))
    assert (viewer.camera.width, viewer.camera.height) == (640, 480)
    viewer.handle_event(("key", "escape"))
    assert viewer.quit


class _FakeGlfw:
    """Just enough of the glfw module to capture the callbacks the render process installs."""
    KEY_ESCAPE, PRESS, RELEASE, REPEAT, MOUSE_BUTTON_LEFT, MOUSE_BUTTON_RIGHT = 256, 1, 0, 2, 0, 1
    KEY_RIGHT, KEY_LEFT, KEY_DOWN, KEY_UP = 262, 263, 264, 265

    def __init__(self):
        self.callbacks = {}

    def __getattr__(self, name):
        if name.startswith("set_") and name.endswith("_callback"):
            return lambda _window, fn: self.callbacks.__setitem__(name[4:-9], fn)
        raise AttributeError(name)

    def get_cursor_pos(self, _window):
        return (12.0, 34.0)


def test_glfw_callbacks_become_events():
    from env.render.hud import Hud
    from env.render.render_process import install_window_callbacks
    glfw, events, hud = _FakeGlfw(), [], Hud(800, 450)
    install_window_callbacks(glfw, None, events, hud)
    glfw.callbacks["char"](None, ord(">"))
    glfw.callbacks["key"](None, glfw.KEY_ESCAPE, 9, glfw.PRESS, 0)
    glfw.callbacks["key"](None, glfw.KEY_ESCAPE, 9, glfw.RELEASE, 0)
    glfw.callbacks["key"](None, glfw.KEY_LEFT, 113, glfw.PRESS, 0)
    glfw.callbacks["key"](None, glfw.KEY_LEFT, 113, glfw.REPEAT, 0)     # held down
    glfw.callbacks["key"](None, glfw.KEY_LEFT, 113, glfw.RELEASE, 0)
    for key in (glfw.KEY_RIGHT, glfw.KEY_UP, glfw.KEY_DOWN):
        glfw.callbacks["key"](None, key, 0, glfw.PRESS, 0)
    glfw.callbacks["mouse_button"](None, glfw.MOUSE_BUTTON_RIGHT, glfw.PRESS, 0)
    glfw.callbacks["cursor_pos"](None, 5.0, 6.0)
    glfw.callbacks["scroll"](None, 0.0, 2.0)
    glfw.callbacks["window_size"](None, 640, 480)
    assert events == [("char", ">"), ("key", "escape"), ("key", "left"), ("key", "left"), ("key", "right"),
                      ("key", "up"), ("key", "down"), ("mouse_button", "right", True, 12.0, 34.0),
                      ("cursor", 5.0, 6.0), ("scroll", 2.0), ("resize", 640, 480)]
    assert (hud.width, hud.height) == (640, 480)


# ---- steering heading_amp's target with the arrow keys --------------------------------------

HEADING_TRAINED = ["--arg_file", "args/run_humanoid3d_amp_heading_trained_args.txt"]
HEADING_NO_AGENT = HEADING_TRAINED + ["--agent_files", "none", "--model_files", "none"]


@pytest.fixture
def heading_viewer():
    viewer = make_viewer(HEADING_NO_AGENT)
    yield viewer
    viewer.world.shutdown()


def goal_from_formula(scene, heading, speed):
    """heading_amp's goal for a target (heading, speed): the target direction (cos h, 0, -sin h)
    in the simulated root's heading frame (x, z), and the speed."""
    from env.sim.ct_state import heading_frame
    _, to_heading = heading_frame(scene.sim_char.get_state()[0][3:7])
    direction = to_heading @ [np.cos(heading), 0.0, -np.sin(heading)]
    return [direction[0], direction[2], speed]


def test_arrow_keys_set_the_heading_goal_marker_and_hud(heading_viewer):
    from app.viewer import HEADING_STEP, TARGET_SPEED_STEP
    from env.scenes.heading_amp import ARROW_MARKERS, ARROW_STEP
    viewer, scene = heading_viewer, heading_viewer.scene
    assert scene.tar_heading == 0.0 and not scene.manual_target
    speed = scene.tar_speed
    viewer.handle_event(("key", "left"))
    viewer.handle_event(("key", "left"))
    viewer.handle_event(("key", "right"))
    viewer.handle_event(("key", "left"))
    assert HEADING_STEP == pytest.approx(np.radians(15))
    assert scene.manual_target and scene.tar_heading == pytest.approx(np.radians(30))
    assert scene.tar_speed == speed
    np.testing.assert_allclose(scene.record_goal(0), goal_from_formula(scene, np.radians(30), speed), atol=1e-12)

    for _ in range(10):
        viewer.handle_event(("key", "down"))
    assert scene.tar_speed == scene.tar_speed_min == 1.0                  # kept in the scene's range
    viewer.handle_event(("key", "up"))
    viewer.handle_event(("key", "up"))
    assert scene.tar_speed == pytest.approx(1.0 + 2 * TARGET_SPEED_STEP)
    for _ in range(20):
        viewer.handle_event(("key", "up"))
    assert scene.tar_speed == scene.tar_speed_max == 5.0
    viewer.handle_event(("key", "down"))
    viewer.tick()                                   # the goal at a later pose, the root turned
    np.testing.assert_allclose(scene.record_goal(0), goal_from_formula(scene, np.radians(30), 4.5), atol=1e-12)

    # the scene's marker: boxes from the root along the user's heading, spaced by the speed
    root = scene.sim_char.get_root_pos()
    _, last, _ = scene.draw_projectiles()[-1]
    np.testing.assert_allclose(last - root, ARROW_MARKERS * ARROW_STEP * 4.5 *
                               np.array([np.cos(np.radians(30)), 0, -np.sin(np.radians(30))]), atol=1e-12)
    lines = viewer.hud_content()[0]
    assert "Target heading: 30 deg (arrow keys)" in lines and "Target speed: 4.5 m/s" in lines


def test_random_target_changes_stop_once_steered(heading_viewer):
    viewer, scene = heading_viewer, heading_viewer.scene
    headings = {scene.tar_heading}
    for _ in range(45):                             # 0.75 s: the timer redraws every 0.2-0.5 s (0.5 s was its edge)
        viewer.tick()
        headings.add(scene.tar_heading)
    assert len(headings) >= 2
    viewer.special_key("right")
    target = (scene.tar_heading, scene.tar_speed)
    for _ in range(60):                             # 1 s: 2 or more timer ends
        viewer.tick()
        assert (scene.tar_heading, scene.tar_speed) == target
    viewer.keyboard("r")                            # a reset keeps the user's target
    assert (scene.tar_heading, scene.tar_speed) == target


def test_arrow_keys_are_ignored_without_a_target(viewer):
    for key in ("left", "right", "up", "down"):
        viewer.special_key(key)
    assert viewer.scene.hud_lines() == [] and not viewer.quit


def test_headless_evaluation_keeps_random_targets():
    """app/evaluate.py (DeepMimic.py --headless --episodes) with the shipped heading policy: the
    scene still draws its targets at random."""
    from app.evaluate import evaluate
    world = load_world(HEADING_TRAINED, enable_draw=False)
    scene = world.env
    targets = []
    update_target = scene.update_target

    def record(timestep):
        update_target(timestep)
        targets.append((scene.tar_heading, scene.tar_speed))

    scene.update_target = record
    try:
        (stats,) = evaluate(world, 1, max_episode_time=1.0)
    finally:
        world.shutdown()
    assert stats.length_s == pytest.approx(1.0) and not scene.manual_target
    assert len({heading for heading, _ in targets}) >= 3     # 1 s: the timer redraws every 0.2-0.5 s


# ---- a goal-setting agent's goal: HUD, marker, digit keys, --hold_goal ---------------------

GOALS_POINT = ["--arg_file", "args/train_goals_goals_point_args.txt", "--train_agents", "false",
               "--tensorboard", "false"]


@pytest.fixture
def goals_viewer(tmp_path):
    viewer = make_viewer(GOALS_POINT + ["--output_path", str(tmp_path)])
    yield viewer
    viewer.world.shutdown()


def goal_marker(viewer):
    """The frame's solid at the goal marker's place above the scene's focus."""
    from app.viewer import GOAL_MARKER_HEIGHT
    spot = viewer.scene.camera_focus() + [0.0, GOAL_MARKER_HEIGHT, 0.0]
    return [s for s in viewer.frame().solids if np.allclose(s.model[:3, 3], spot)]


def test_goal_hud_marker_and_digit_keys(goals_viewer):
    from app.viewer import GOAL_COLORS
    viewer, agent = goals_viewer, goals_viewer.world.agents[0]
    goal_steps = agent.config.goal_steps
    for _ in range(2 * goal_steps):                 # a decision every 2 frames: goals chosen by the policy
        viewer.tick()
    [marker] = goal_marker(viewer)
    np.testing.assert_allclose(marker.color, GOAL_COLORS[agent.goal_id])
    assert f"Goal: {agent.goal_id} (goals 0-3; digit keys hold one)" in viewer.hud_lines()

    held = (agent.goal_id + 1) % agent.num_goals
    viewer.handle_event(("char", str(held)))
    assert agent.held_goal == held
    decisions = len(agent.path.extras["goal_ids"])
    for _ in range(2 * 2 * goal_steps):              # past the next goal choice
        viewer.tick()
    ids = agent.path.extras["goal_ids"][decisions:]
    assert ids[-goal_steps:] == [held] * goal_steps
    [marker] = goal_marker(viewer)
    np.testing.assert_allclose(marker.color, GOAL_COLORS[held])
    assert f"Goal: {held} (goals 0-3; held, key {held} releases it)" in viewer.hud_lines()

    viewer.keyboard("7")                            # no goal 7: ignored
    assert agent.held_goal == held
    viewer.keyboard(str(held))                      # the same key releases it
    assert agent.held_goal is None


def test_no_goal_marker_without_a_goals_agent(sim_viewer):
    assert not any(line.startswith("Goal:") for line in sim_viewer.hud_lines())
    sim_viewer.keyboard("1")
    assert len(sim_viewer.frame().solids) == 15     # the simulated character's bodies alone


def test_hold_goal_arg(tmp_path):
    world = load_world(GOALS_POINT + ["--output_path", str(tmp_path), "--hold_goal", "3"])
    try:
        assert world.agents[0].held_goal == 3
    finally:
        world.shutdown()
    with pytest.raises(ValueError, match=r"--hold_goal 4: goals are 0-3"):
        load_world(GOALS_POINT + ["--output_path", str(tmp_path), "--hold_goal", "4"])


def test_cycle_goals_arg(tmp_path):
    """--cycle_goals K: a test episode takes goals 0, 1, 2, 3, 0, ... each for K goal periods; a
    held goal comes first; a negative K is an error naming it."""
    world = load_world(GOALS_POINT + ["--output_path", str(tmp_path), "--cycle_goals", "2"])
    try:
        agent = world.agents[0]
        period = 2 * agent.config.goal_steps
        while len(agent.path.extras["goal_ids"]) < 5 * period:
            update_world(world, FRAME_TIME)
        ids = agent.path.extras["goal_ids"][:5 * period]
        assert ids == [k % 4 for k in range(5) for _ in range(period)]
        agent.held_goal = 2
        for _ in range(2 * period):
            update_world(world, FRAME_TIME)
        assert agent.path.extras["goal_ids"][-agent.config.goal_steps:] == [2] * agent.config.goal_steps
    finally:
        world.shutdown()
    with pytest.raises(ValueError, match=r"--cycle_goals -1: goal periods per goal must be >= 0"):
        load_world(GOALS_POINT + ["--output_path", str(tmp_path), "--cycle_goals", "-1"])

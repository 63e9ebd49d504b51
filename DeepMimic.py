"""DeepMimic's viewer: args -> world -> a window at 60 frames/s, or headless frames.

    python DeepMimic.py --arg_file args/kin_char_args.txt
    python DeepMimic.py --arg_file args/run_humanoid3d_walk_wheel_args.txt --headless --record walk.mp4
    python DeepMimic.py --arg_file ... --headless --screenshot shot.png [--record_seconds 2]
    python DeepMimic.py --arg_file ... --headless --episodes 5 [--stats stats.json]
    python DeepMimic.py --arg_file ... --headless --episodes 5 --record_demos demos.npz [--demo_actions sample]
    python DeepMimic.py --arg_file args/run_humanoid3d_walk_wheel_args.txt --policy_file walk.onnx

Viewer options (besides the world's): --headless; --record PATH (a video for .mp4/.mkv/.mov/
.avi/.webm, else a folder of PNG frames); --record_seconds S (simulated seconds, default 5 with
--record, else 0); --screenshot PATH (the last frame); --episodes N and --stats FILE (headless
evaluation: per episode and in the summary, the reward, return, falls and, when the scene tracks a
clip, the imitation metrics and successes, when it judges style (AMP scenes; imitate with
--enable_style_error), the style metrics; --success_body_pos_err M sets a success's bound on the
mean body position error, default 0.08 m); --cam_track_mode xz|y|xyz|still|fixed; --msaa N (anti-aliasing samples, default 4).
--record_demos FILE.npz with --episodes N: roll the agent out and write a demonstration dataset
(app/record_demos.py) instead of evaluating; --demo_actions mean|sample (default mean),
--demo_ctrl_file (the training scene's controller file, whose layout the data is written in;
default: data/controllers/humanoid3d_ctrl.txt for a 2018-layout expert, else the scene's own),
--demo_episode_time S (cut episodes at S seconds; default: the scene's test limit).
--policy_file FILE.onnx|FILE.npz: agent 0 acts with a policy written by scripts/export_policy.py
instead of its checkpoint (--model_files is not loaded): mean actions, no training
(learning/agents/exported_policy_agent.py).
A flag given without a value means true.

Keys: Esc quit; space pause; > / < one frame forward / back; . / , playback speed +-0.05, / back
to 1; l reload the arg files; r reset the episode; t toggle training; k show/hide the reference
character; x / z throw a small / big box; s write the character state to output/char_state.json;
y trace the root and end effectors; arrow keys (heading scenes) steer the target: left / right
turn the target heading by 15 degrees, up / down change the target speed by 0.5 m/s, and the
scene's random targets stop; digit d (goal-setting agents, AgentType Goals, whose current goal the
HUD and a coloured sphere above the character show) holds goal d in test episodes, pressed again
hands the choice back to the goal policy (--hold_goal d from the start, also for --episodes and
--record; --cycle_goals K: the goals in turn, each for K goal periods). Mouse: right drag pans,
wheel zooms, left drag on a body pulls it (physics scenes), left drag elsewhere turns the camera.
"""
import json
import sys
import time
from dataclasses import dataclass

from util.cli import configure_process_env, run_main

configure_process_env()  # thread caps (OPENBLAS_NUM_THREADS=1) before numpy is first imported

from env.env import FRAME_TIME  # noqa: E402
from env.render.camera import TRACK_MODES  # noqa: E402
from env.tracking_error import SUCCESS_BODY_POS_ERR  # noqa: E402
from util.arg_parser import ArgError, load_args  # noqa: E402

WIDTH, HEIGHT = 800, 450
DEFAULT_RECORD_SECONDS = 5.0


@dataclass
class ViewerOptions:
    headless: bool
    record: str
    record_seconds: float
    screenshot: str
    episodes: int
    stats: str
    track_mode: str
    msaa: int
    record_demos: str = ""
    demo_actions: str = "mean"
    demo_ctrl_file: str = ""
    demo_episode_time: float = 0.0
    success_body_pos_err: float = SUCCESS_BODY_POS_ERR
    policy_file: str = ""

    @classmethod
    def parse(cls, args):
        record = args.parse_string("record")
        options = cls(
            headless=_flag(args, "headless"), record=record,
            record_seconds=args.parse_float("record_seconds", DEFAULT_RECORD_SECONDS if record else 0.0),
            screenshot=args.parse_string("screenshot"), episodes=args.parse_int("episodes"),
            stats=args.parse_string("stats"), track_mode=args.parse_string("cam_track_mode", "xz"),
            msaa=args.parse_int("msaa", 4), record_demos=args.parse_string("record_demos"),
            demo_actions=args.parse_string("demo_actions", "mean"),
            demo_ctrl_file=args.parse_string("demo_ctrl_file"),
            demo_episode_time=args.parse_float("demo_episode_time", 0.0),
            success_body_pos_err=args.parse_float("success_body_pos_err", SUCCESS_BODY_POS_ERR),
            policy_file=args.parse_string("policy_file"))
        if not options.success_body_pos_err > 0:
            raise ArgError(f"--success_body_pos_err {options.success_body_pos_err}: must be > 0 (metres)")
        if options.record_demos and not options.episodes:
            raise ArgError("--record_demos needs --headless --episodes N")
        if options.record_demos and options.policy_file:
            raise ArgError("--record_demos records the agent's own model; it cannot use --policy_file")
        if options.demo_actions not in ("mean", "sample"):
            raise ArgError(f"--demo_actions: expected mean or sample, got {options.demo_actions!r}")
        if options.track_mode not in TRACK_MODES:
            raise ArgError(f"--cam_track_mode: unknown mode {options.track_mode!r} ({', '.join(TRACK_MODES)})")
        if record and options.record_seconds <= 0:
            raise ArgError(f"--record_seconds must be > 0 with --record, got {options.record_seconds}")
        if (record or options.screenshot or options.episodes) and not options.headless:
            raise ArgError("--record, --screenshot and --episodes need --headless")
        if options.headless and not (record or options.screenshot or options.episodes):
            raise ArgError("--headless needs --record, --screenshot or --episodes")
        return options


def _flag(args, key):
    """`--key` alone is true; `--key true/false` as usual."""
    return args.has_key(key) and (not args.table[key] or args.parse_bool(key))


# ---- window ---------------------------------------------------------------------------------

def run_window(viewer, options):
    """Ticks at the viewer's interval and draws at up to 60 frames/s; the window lives in the
    render process, which sends back its input events."""
    from env.render.render_process import RenderProcess
    render = RenderProcess(WIDTH, HEIGHT, headless=False, msaa=options.msaa)
    print(f"OpenGL {render.gl_info}")
    try:
        last_tick = next_draw = time.perf_counter()
        while not viewer.quit:
            now = time.perf_counter()
            if now - last_tick >= viewer.tick_interval():
                viewer.tick()
                last_tick = now
            if now >= next_draw:
                for event in render.draw(viewer.frame(), viewer.camera, *viewer.hud_content()):
                    viewer.handle_event(event)
                next_draw = now + FRAME_TIME
            wake = min(last_tick + viewer.tick_interval(), next_draw)
            time.sleep(max(0.0, wake - time.perf_counter()))
    finally:
        render.close()


# ---- headless -------------------------------------------------------------------------------

def headless_frames(viewer, seconds, msaa):
    """Renders the start, then one image per 1/60 s of simulated time for `seconds`.

    A virtual clock runs the viewer's ticks, so playback speed and the frame count do not
    depend on how fast the machine renders. Yields (frame index, image); index 0 is the start.
    """
    from env.render.render_process import RenderProcess
    render = RenderProcess(WIDTH, HEIGHT, headless=True, msaa=msaa)
    print(f"OpenGL {render.gl_info}")
    try:
        yield 0, render.draw(viewer.frame(), viewer.camera, *viewer.hud_content())
        clock, next_tick = 0.0, viewer.tick_interval()
        for index in range(1, round(seconds / FRAME_TIME) + 1):
            clock += FRAME_TIME
            while clock >= next_tick - 1e-9:
                viewer.tick()
                next_tick += viewer.tick_interval()
            yield index, render.draw(viewer.frame(), viewer.camera, *viewer.hud_content())
    finally:
        render.close()


def run_headless(viewer, options):
    from env.render.recorder import open_sink, write_png
    sink = open_sink(options.record) if options.record else None
    image = None
    for index, image in headless_frames(viewer, options.record_seconds, options.msaa):
        if sink is not None and index > 0:
            sink.add(image)
    if sink is not None:
        sink.close()
        print(f"recorded {sink.count} frames to {options.record}")
    if options.screenshot:
        write_png(options.screenshot, image)
        print(f"screenshot written to {options.screenshot}")


def run_evaluation(argv, options):
    """N test-mode episodes without drawing (app/evaluate.py); prints and writes stats."""
    from app.build import load_world
    from app.evaluate import evaluate, format_episode, summarize, write_stats
    world = load_world(argv, enable_draw=False)
    try:
        if not world.agents or world.agents[0] is None:
            raise ValueError(f"--episodes needs an agent; scene {world.env.name} has none")
        stats = evaluate(world, options.episodes, success_body_pos_err=options.success_body_pos_err)
    finally:
        world.shutdown()
    for index, episode in enumerate(stats):
        print(format_episode(index, episode))
    print("summary:", json.dumps(summarize(stats)))
    if options.stats:
        write_stats(options.stats, stats)
        print(f"stats written to {options.stats}")


def run_record_demos(argv, options):
    """N test-mode episodes written as a demonstration dataset (app/record_demos.py)."""
    import shlex

    from app.build import load_world
    from app.record_demos import record_demos
    from app.skill_package import git_commit
    from learning.demos import save_demos
    world = load_world(argv, enable_draw=False)
    try:
        if not world.agents or world.agents[0] is None:
            raise ValueError(f"--record_demos needs an agent; scene {world.env.name} has none")
        data = record_demos(world, options.episodes, sample=options.demo_actions == "sample",
                            target_ctrl_file=options.demo_ctrl_file or None,
                            episode_time=options.demo_episode_time or None,
                            seed=world.arg_parser.parse_int("rand_seed", 0))
    finally:
        world.shutdown()
    data.metadata["command"] = shlex.join([".venv/bin/python", "DeepMimic.py", *argv])
    data.metadata.update(git_commit())
    save_demos(options.record_demos, data)
    meta = data.metadata
    print(f"{data.num_steps} steps in {data.num_episodes} episodes ({meta['falls']} falls, mean env reward "
          f"{meta['mean_env_reward']:.4f}), layout {meta['layout']} (state {meta['state_size']}, action "
          f"{meta['action_size']}), written to {options.record_demos}")


def main(argv=None):
    """Bad arguments, a missing data file or no OpenGL: a ValueError / FileNotFoundError, which
    util.cli.run_main prints as one line `DeepMimic.py: error: ...` with exit status 2."""
    argv = sys.argv[1:] if argv is None else argv
    from app.skill_recipes import untrained_hint
    from env.render.gl_context import GLUnavailable, has_display
    from learning.checkpoint import CheckpointError
    args = load_args(argv)
    try:
        options = ViewerOptions.parse(args)
        if not options.headless and not has_display():
            raise GLUnavailable("no display found; use --headless with --record, --screenshot or --episodes")
        if options.record_demos:
            run_record_demos(argv, options)
        elif options.episodes:
            run_evaluation(argv, options)
        else:
            run_viewer(argv, options)
    except GLUnavailable as err:
        raise ValueError(str(err)) from None
    except CheckpointError as err:
        raise CheckpointError(str(err) + untrained_hint(args.sources.get("model_files", ""))) from None


def run_viewer(argv, options):
    from app.build import load_world
    from app.viewer import Viewer
    viewer = Viewer(lambda: load_world(argv), WIDTH, HEIGHT, options.track_mode)
    try:
        (run_headless if options.headless else run_window)(viewer, options)
    finally:
        viewer.world.shutdown()


if __name__ == "__main__":
    sys.exit(run_main(main, "DeepMimic.py"))

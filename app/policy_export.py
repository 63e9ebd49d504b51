"""A trained policy's actor as one graph: DeepMimic's raw state (and goal) in, the raw action out.

The graph is the agent's test-mode decision (learning/agents/pg_agent.py) with everything around the
network folded in:
    s_n     = (state - s_norm.mean) / s_norm.std          (g_n likewise for the goal)
    m       = actor mean([s_n, g_n])                      (normalised action units)
    action  = a_norm.mean + a_norm.std * m                (what env.set_action takes)
    log_std = logstd + log(a_norm.std)                    (--with_logstd: the exploration Gaussian's
                                                           log-std in raw action units, per entry)
The action is the controller's PD targets as ct_action.py reads them, or with imitate's opt-in
--ref_relative_actions an offset from the reference pose (metadata action_relative_to_reference).
The agent normalises in float64 and runs the network in float32; the graph runs all in float32,
so the two agree to float32 rounding.

Sources: a training run's output directory (its args.txt, the agent file copies beside it, and
agent0_model.ckpt) or an argument file (its --model_files). The world is built as DeepMimic.py
builds it (app/build.build_world), with the run's outputs off, so the normalisers, sizes
and layouts are the agent's own. Agent 0 is exported.
"""
import subprocess
from pathlib import Path

import numpy as np

from app.build import build_world
from env.scenes.rl_scene_sim_char import RLSceneSimChar
from learning.nets.graph_ops import Graph
from util.arg_parser import load_args
from util.paths import project_root

EXPORTABLE_AGENTS = ("PPO", "AMP", "GAIL")
RUN_ARGS = "args.txt"                   # what DeepMimic_Optimizer.copy_run_inputs writes
RUN_CHECKPOINT = "agent0_model.ckpt"    # RLAgent.get_output_path of agent 0


def source_args(source):
    """The ArgParser that builds the source's world and loads its checkpoint, with the run's
    outputs (log, checkpoints, TensorBoard) and resuming off."""
    source = Path(source)
    if source.is_dir():
        args = _run_dir_args(source)
    elif source.is_file():
        args = load_args(["--arg_file", str(source)])
        models = args.parse_strings("model_files")
        if not models or models[0] == "none":
            raise ValueError(f"{source}: --model_files names no checkpoint to export")
    else:
        raise FileNotFoundError(f"{source}: no such argument file or output directory")
    for key, value in (("output_path", ""), ("int_output_path", ""), ("resume", "false"), ("tensorboard", "false")):
        args.set(key, value)
    return args


def _run_dir_args(run_dir):
    """An output directory's args.txt, its agent files taken from the copies beside it, and its
    checkpoint agent0_model.ckpt."""
    args_file, ckpt = run_dir / RUN_ARGS, run_dir / RUN_CHECKPOINT
    if not args_file.is_file():
        raise ValueError(f"{run_dir}: not a training output directory (no {RUN_ARGS})")
    if not Path(f"{ckpt}.index").is_file():
        raise ValueError(f"{run_dir}: no checkpoint {RUN_CHECKPOINT} in the output directory")
    args = load_args(["--arg_file", str(args_file)])
    agent_files = [str(run_dir / Path(f).name) if (run_dir / Path(f).name).is_file() else f
                   for f in args.parse_strings("agent_files")]
    args.set("agent_files", agent_files)
    args.set("model_files", [str(ckpt)] + ["none"] * (len(agent_files) - 1))
    return args


def exportable_agent(world, source):
    """Agent 0 of the world, after checking that its policy is a Gaussian actor over
    [state, (goal)] on a simulated character's controller."""
    agent = world.agents[0] if world.agents else None
    if agent is None:
        raise ValueError(f"{source}: scene {world.env.name} has no agent 0 to export")
    if agent.NAME not in EXPORTABLE_AGENTS:
        raise ValueError(f"{source}: agent type {agent.NAME} cannot be exported (supported: "
                         f"{', '.join(EXPORTABLE_AGENTS)})")
    if not isinstance(world.env, RLSceneSimChar):
        raise ValueError(f"{source}: scene {world.env.name} has no simulated character controller")
    return agent


def actor_graph(agent, with_logstd=False):
    """The graph of the module docstring; inputs "state" (and "goal"), outputs "action" (and
    "log_std"). A net whose forward uses an operation the graph cannot record is a ValueError
    naming the net."""
    graph = Graph()
    s_norm, g_norm, a_norm = agent.s_norm, agent.g_norm, agent.a_norm
    inputs = [(graph.input("state", s_norm.size) - s_norm.mean) / s_norm.std]
    if agent.has_goal():
        inputs.append((graph.input("goal", g_norm.size) - g_norm.mean) / g_norm.std)
    model = agent.model
    try:
        mean = model.actor_mean_graph(graph, inputs)
    except (AttributeError, TypeError) as err:
        raise ValueError(f"actor net {agent.config.actor_net!r} cannot be exported: its forward uses an "
                         f"operation the export does not record ({err})") from None
    graph.output("action", mean * a_norm.std + a_norm.mean, ["batch", a_norm.size])
    if with_logstd:
        log_std = model.logstd_np().astype(np.float64) + np.log(a_norm.std)
        graph.output("log_std", graph.constant("log_std_value", log_std), [a_norm.size])
    return graph


def policy_metadata(world, agent, source):
    """What a user of the exported file needs besides the graph: sizes, a name per entry, where
    the policy came from and how it is run."""
    args, scene = world.arg_parser, world.env
    ctrl = scene.ctrl
    return {
        "project_version": project_version(),
        "source": str(source),
        "checkpoint": args.parse_strings("model_files")[0],
        "agent_type": agent.NAME,
        "actor_net": agent.config.actor_net,
        "scene": world.env.name,
        "character_file": args.parse_strings("character_files")[0],
        "controller_file": args.parse_strings("char_ctrl_files")[0],
        "motion_file": args.parse_string("motion_file"),
        "layout": ctrl.params.layout,
        "decision_rate_hz": ctrl.params.query_rate,
        "action_relative_to_reference": args.parse_bool("ref_relative_actions", False),
        "state_size": agent.get_state_size(),
        "goal_size": agent.get_goal_size(),
        "action_size": agent.get_action_size(),
        **entry_names(scene, agent.id),
    }


def entry_names(scene, agent_id=0):
    """{state_names, goal_names, action_names}: a name per entry of the scene's state, goal and
    action vectors (env/sim/ct_state.py, the scene's goal_names, env/sim/ct_action.py)."""
    return {"state_names": scene.state_names(agent_id),
            "goal_names": scene.goal_names(agent_id),
            "action_names": scene.ctrl.action_layout.entry_names()}


def project_version():
    """`git describe --always --dirty` of the project, or "unknown" outside a git checkout."""
    try:
        out = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=project_root(), capture_output=True,
                             text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 else "unknown"


def export_policy(source, with_logstd=False):
    """(graph, metadata) of agent 0's policy in `source` (an output directory or argument file)."""
    world = build_world(source_args(source), enable_draw=False)
    try:
        agent = exportable_agent(world, source)
        return actor_graph(agent, with_logstd), policy_metadata(world, agent, source)
    finally:
        world.shutdown()

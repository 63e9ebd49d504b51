"""RLAgent: DeepMimic's agent loop (deepmimic.md 5.1), independent of the learning algorithm.

Per decision: record state and goal (and the previous step's reward), decide an action, apply it,
append to the path. At an episode's end: the final state, goal and reward and the terminate flag;
in TRAIN the path is stored and, once every rank's buffer allows a train step, _train runs (it is
a sequence of MPI collectives, so every rank runs it the same number of times; see _ready_to_train
for how the ranks agree without waiting on each other); in TEST the returns
accumulate until test episodes x ranks >= TestEpisodes, then they are summed over the ranks.

Modes: TRAIN; TRAIN_END (training has ended and the episode in progress finishes as training
data; since _train runs at an episode's end, the next episode is already a test one); TEST
(mean actions, no storing). The first _train call only marks the buffer initialised: its batch
feeds the normalisers. A test phase follows it and every crossing of a multiple of
IntOutputIters. Subclasses implement _decide_action, _train_step, save_model, load_model.
"""
import os
import time

import numpy as np

import util.mpi_util as mpi_util
from env.env import ActionSpace, Mode, Terminate
from learning.configs.exp_params import ExpParams
from learning.normalizer import Normalizer
from learning.path import Path
from learning.replay_buffer import ReplayBuffer, pg_fields
from learning.test_metrics import TestMetrics
from util.cli import RunError
from util.logger import Logger

NONFINITE_PATHS_WARN = 10
NONFINITE_PATHS_STOP = 100


class RLAgent:
    NAME = "None"
    NEEDS_DEMOS = False     # True: the builder passes the world's demonstrations (learning/demos.py)

    def __init__(self, world, id, config):
        self.world = world
        self.env = world.env
        self.id = id
        self.config = config
        self.logger = Logger()
        self._reward_term_sums = {}     # {term: (sum, count)} of this iteration's training rewards
        self.mode = Mode.TRAIN
        self.enable_training = True
        self.iter = 0
        self.start_time = time.time()
        self.output_dir = ""
        self.int_output_dir = ""
        self.train_return = 0.0
        self.test_return = 0.0
        self.test_episode_count = 0
        self.avg_test_return = 0.0
        # the test phases' imitation and style metrics (those the env reports)
        self.test_metrics = TestMetrics(self.env, id)
        self.total_sample_count = 0
        self._sample_count_offset = 0   # samples of the run this one resumes
        self._ready_barrier = None      # posted when this rank is ready to train (_ready_to_train)
        self._nonfinite_paths = 0       # consecutive paths discarded for NaN / inf values
        if self.get_action_space() != ActionSpace.Continuous:
            raise ValueError(f"{self.NAME} agent needs a continuous action space, "
                             f"agent {id} has {self.get_action_space().name}")
        self._load_params(config)
        self._build_normalizers()
        self._build_bounds()
        self._build_replay_buffer()
        self.path = Path(self._path_extra_fields())

    def __str__(self):
        return (f"Agent {self.id}: {self.NAME}, state {self.get_state_size()}, "
                f"goal {self.get_goal_size()}, action {self.get_action_size()}")

    # ---- environment queries ----
    def get_action_space(self):
        return self.env.get_action_space(self.id)

    def get_state_size(self):
        return self.env.get_state_size(self.id)

    def get_goal_size(self):
        return self.env.get_goal_size(self.id)

    def get_action_size(self):
        return self.env.get_action_size(self.id)

    def has_goal(self):
        return self.get_goal_size() > 0

    # ---- set-up ----
    def _load_params(self, config):
        """Per-rank sizes (DeepMimic's quirk of dividing the buffer by N twice is not kept)."""
        num_procs = mpi_util.size()
        self.local_mini_batch_size = max(int(np.ceil(config.mini_batch_size / num_procs)), 1)
        self.mini_batch_size = self.local_mini_batch_size * num_procs
        self.replay_buffer_size = int(np.ceil(config.replay_buffer_size / num_procs))
        self.exp_params_curr = config.exp_params_beg
        self.need_normalizer_update = config.normalizer_samples > 0

    def _build_normalizers(self):
        env, i = self.env, self.id
        self.s_norm = Normalizer(self.get_state_size(), env.build_state_norm_groups(i))
        self.s_norm.set_mean_std(-env.build_state_offset(i), 1 / env.build_state_scale(i))
        self.g_norm = Normalizer(self.get_goal_size(), env.build_goal_norm_groups(i))
        self.g_norm.set_mean_std(-env.build_goal_offset(i), 1 / env.build_goal_scale(i))
        self.a_norm = Normalizer(self.get_action_size())
        self.a_norm.set_mean_std(-env.build_action_offset(i), 1 / env.build_action_scale(i))

    def _build_bounds(self):
        self.a_bound_min = np.asarray(self.env.build_action_bound_min(self.id), dtype=np.float64)
        self.a_bound_max = np.asarray(self.env.build_action_bound_max(self.id), dtype=np.float64)

    def _buffer_fields(self):
        """The replay buffer's schema; subclasses append per-action fields (they go in path.extras)."""
        return pg_fields(self.get_state_size(), self.get_goal_size(), self.get_action_size())

    def _buffer_filter_flags(self):
        return ()

    def _path_extra_fields(self):
        core = {f.name for f in pg_fields(0, 0, 0)}
        return [f.name for f in self._buffer_fields() if f.name not in core]

    def _build_replay_buffer(self):
        self.replay_buffer = ReplayBuffer(self.replay_buffer_size, self._buffer_fields(),
                                          self._buffer_filter_flags())
        self.replay_buffer_initialized = False

    def set_output_dirs(self, output_dir, int_output_dir, append_log=False):
        self.output_dir = output_dir
        self.int_output_dir = int_output_dir
        if output_dir:
            self.logger.configure_output_file(os.path.join(output_dir, f"agent{self.id}_log.txt"),
                                              append=append_log)

    def set_enable_training(self, enable):
        self.enable_training = enable
        if enable:
            self.reset()

    def enable_testing(self):
        return self.config.test_episodes > 0

    # ---- the loop ----
    def reset(self):
        self.path.clear()

    def update(self, timestep):
        if self.env.need_new_action(self.id):
            self._update_new_action()

    def end_episode(self):
        if self.path.pathlength() == 0:
            return
        self._end_path()
        if self.mode in (Mode.TRAIN, Mode.TRAIN_END):
            if self.enable_training:
                self._store_path(self.path)
                if self.mode == Mode.TRAIN and self._ready_to_train():
                    self._train()
                    self._update_exp_params()
                    self.env.set_sample_count(self.total_sample_count)
            if self.mode == Mode.TRAIN_END:
                self._init_mode_test()
        else:
            self._update_test_return(self.path)

    def _is_first_step(self):
        return len(self.path.states) == 0

    def _update_new_action(self):
        s = self.env.record_state(self.id)
        g = self.env.record_goal(self.id)
        if not self._is_first_step():
            self._record_reward()
        a, logp = self._decide_action(s, g)
        flags = self._record_flags()
        self.env.set_action(self.id, a)
        self.path.states.append(s)
        self.path.goals.append(g)
        self.path.actions.append(a)
        self.path.logps.append(logp)
        self.path.flags.append(flags)
        if self._enable_draw():
            self._log_val(s, g)

    def _end_path(self):
        self.path.states.append(self.env.record_state(self.id))
        self.path.goals.append(self.env.record_goal(self.id))
        self._record_reward()
        self.path.terminate = self.env.check_terminate(self.id)

    def _record_reward(self):
        """The env's reward into the path; with TensorBoard (rank 0), its named terms into the
        iteration's sums of training rewards; in test mode, the imitation and style metrics."""
        self.path.rewards.append(self.env.calc_reward(self.id))
        if self.mode == Mode.TEST and self.test_metrics.enabled:
            self.test_metrics.add_decision()
        if self.logger.tensorboard_enabled and self.mode == Mode.TRAIN:
            for name, val in self.env.get_reward_terms(self.id).items():
                total, count = self._reward_term_sums.get(name, (0.0, 0))
                self._reward_term_sums[name] = (total + val, count + 1)

    def _record_flags(self):
        return 0

    def _enable_draw(self):
        return self.env.enable_draw

    def _log_val(self, s, g):
        pass

    def _decide_action(self, s, g):
        raise NotImplementedError

    # ---- storing and training ----
    def _store_path(self, path):
        path_id = self.replay_buffer.store(path)
        self._count_nonfinite_path(path)
        if path_id >= 0:
            self.train_return = path.calc_return()
            if self.need_normalizer_update:
                self._record_normalizers(path)
        return path_id

    def _count_nonfinite_path(self, path):
        """Paths with a NaN or infinite state, action or reward are discarded (the replay buffer
        refuses them); NONFINITE_PATHS_WARN in a row print a warning, NONFINITE_PATHS_STOP stop
        the run (RunError: one line), instead of sampling forever without training."""
        if path.check_vals():
            self._nonfinite_paths = 0
            return
        self._nonfinite_paths += 1
        where = f"rank {mpi_util.rank()}: agent {self.id}: {self._nonfinite_paths} paths in a row with non-finite " \
                "states, actions or rewards"
        if self._nonfinite_paths >= NONFINITE_PATHS_STOP:
            raise RunError(f"{where}: the env gives NaN or infinite values; the run stops")
        if self._nonfinite_paths % NONFINITE_PATHS_WARN == 0:
            print(f"warning: {where} (discarded)", flush=True)

    def _record_normalizers(self, path):
        self.s_norm.record(np.array(path.states))
        if self.has_goal():
            self.g_norm.record(np.array(path.goals))

    def _update_normalizers(self):
        self.s_norm.update()
        if self.has_goal():
            self.g_norm.update()

    def _valid_train_step(self):
        raise NotImplementedError

    def _ready_to_train(self):
        """This rank's buffer allows a train step and so does every other rank's. A rank that is
        ready first does not block in the round's first collective: it posts a non-blocking
        barrier and keeps sampling with the same policy, and its extra samples join the round (the
        update takes the whole buffer, as it takes the rest of a path that overshoots the batch).
        Every rank sees the barrier complete at one of its episode ends, so each runs _train the
        same number of times."""
        if mpi_util.size() == 1:
            return self._valid_train_step()
        if self._ready_barrier is None:
            if not self._valid_train_step():
                return False
            self._ready_barrier = mpi_util.ibarrier()
        if not self._ready_barrier.Test():
            return False
        self._ready_barrier = None
        return True

    def _get_iters_per_update(self):
        return mpi_util.size() * self.config.iters_per_update

    def _train(self):
        """One training round (collective): log row(s), train step(s), checkpoints, normalisers."""
        self.total_sample_count = self._sample_count_offset + int(mpi_util.reduce_sum(self.replay_buffer.total_count))
        end_training = False
        if self.replay_buffer_initialized:
            prev_iter = self.iter
            avg_train_return = mpi_util.reduce_mean(self.train_return)
            for _ in range(self._get_iters_per_update()):
                self._log_iteration_header(avg_train_return)
                self._update_iter(self.iter + 1)
                self._train_step()
                self.logger.dump_tabular()
            if prev_iter // self.config.sync_check_iters != self.iter // self.config.sync_check_iters:
                self._check_synced()
            if prev_iter // self.config.int_output_iters != self.iter // self.config.int_output_iters:
                end_training = self.enable_testing()
        elif self.total_sample_count >= self.config.init_samples:
            self.replay_buffer_initialized = True
            end_training = self.enable_testing()
        if self.need_normalizer_update:
            self._update_normalizers()
            self.need_normalizer_update = self.config.normalizer_samples > self.total_sample_count
        if end_training:
            self.mode = Mode.TRAIN_END

    def _log_iteration_header(self, avg_train_return):
        log = self.logger.log_tabular
        log("Iteration", self.iter)
        log("Wall_Time", (time.time() - self.start_time) / 3600)
        log("Samples", self.total_sample_count)
        log("Train_Return", avg_train_return)
        log("Test_Return", self.avg_test_return)
        for name, val in self.test_metrics.averages.items():
            log(name, val)
        log("State_Mean", float(np.mean(self.s_norm.mean)))
        log("State_Std", float(np.mean(self.s_norm.std)))
        log("Goal_Mean", float(np.mean(self.g_norm.mean)) if self.has_goal() else 0.0)
        log("Goal_Std", float(np.mean(self.g_norm.std)) if self.has_goal() else 0.0)
        for name, (total, count) in self._reward_term_sums.items():
            self.logger.log_scalar(f"Reward_Terms/{name}", total / count)
        self._reward_term_sums = {}
        log("Exp_Rate", self.exp_params_curr.rate)
        log("Exp_Noise", self.exp_params_curr.noise)

    def _train_step(self):
        raise NotImplementedError

    def _check_synced(self):
        """Collective, every SyncCheckIters iterations: ranks still hold the same parameters."""

    def _update_exp_params(self):
        t = float(np.clip(self.total_sample_count / self.config.exp_anneal_samples, 0, 1))
        self.exp_params_curr = self.config.exp_params_beg.lerp(self.config.exp_params_end, t)

    # ---- testing ----
    def _update_test_return(self, path):
        self.test_return += path.calc_return()
        self.test_episode_count += 1
        if self.test_metrics.enabled:
            self.test_metrics.end_episode(path.terminate == Terminate.Fail)
        if self.test_episode_count * mpi_util.size() >= self.config.test_episodes:
            global_return = mpi_util.reduce_sum(self.test_return)
            global_count = mpi_util.reduce_sum(self.test_episode_count)
            self.avg_test_return = global_return / global_count
            if self.test_metrics.enabled:
                self.test_metrics.end_phase(global_count)
            if self.enable_training:
                self._init_mode_train()

    def _init_mode_train(self):
        self.mode = Mode.TRAIN
        self.env.set_mode(self.mode)

    def _init_mode_test(self):
        self.mode = Mode.TEST
        self.test_return = 0.0
        self.test_episode_count = 0
        self.test_metrics.start_phase()
        self.env.set_mode(self.mode)

    # ---- outputs ----
    def _enable_output(self):
        return mpi_util.is_root() and self.output_dir != ""

    def _enable_int_output(self):
        return mpi_util.is_root() and self.int_output_dir != ""

    def get_output_path(self):
        return os.path.join(self.output_dir, f"agent{self.id}_model.ckpt")

    def get_int_output_path(self):
        return os.path.join(self.int_output_dir, f"agent{self.id}_models",
                            f"agent{self.id}_int_model_{self.iter:010d}.ckpt")

    def _update_iter(self, new_iter):
        """Saves the model of the iteration now ending (every OutputIters / IntOutputIters)."""
        if self._enable_output() and self.iter % self.config.output_iters == 0:
            self.save_outputs()
        if self._enable_int_output() and self.iter % self.config.int_output_iters == 0:
            self.save_model(self.get_int_output_path())
        self.iter = new_iter

    def save_outputs(self):
        """Rank 0 with an output path: the model checkpoint plus its resume state."""
        if self._enable_output():
            self.save_model_and_resume_state(self.get_output_path())

    def save_model(self, path):
        raise NotImplementedError

    def save_model_and_resume_state(self, path):
        """The checkpoint and the resume state that goes with it (learning/resume_state.py)."""
        raise NotImplementedError

    def load_model(self, path):
        raise NotImplementedError

    # ---- resume ----
    def resume_state(self):
        """What a resumed run needs beyond the model: {key: number or array}."""
        return {
            "iter": self.iter,
            "total_sample_count": self.total_sample_count,
            "exp_rate": self.exp_params_curr.rate,
            "exp_noise": self.exp_params_curr.noise,
            "wall_time": (time.time() - self.start_time) / 3600,
            "num_workers": mpi_util.size(),      # of the leg that wrote it: a curve point's provenance
            "train_return": self.train_return,
            "avg_test_return": self.avg_test_return,
            **{f"avg_test_tracking/{name}": val for name, val in self.test_metrics.averages.items()},
            "replay_buffer_initialized": self.replay_buffer_initialized,
            "need_normalizer_update": self.need_normalizer_update,
            "s_norm/mean_sq": self.s_norm.mean_sq,
            "g_norm/mean_sq": self.g_norm.mean_sq,
        }

    def load_resume_state(self, state):
        self.iter = int(state["iter"])
        self.total_sample_count = self._sample_count_offset = int(state["total_sample_count"])
        self.exp_params_curr = ExpParams(rate=float(state["exp_rate"]), noise=float(state["exp_noise"]))
        self.start_time = time.time() - float(state["wall_time"]) * 3600
        self.train_return = float(state["train_return"])
        self.avg_test_return = float(state["avg_test_return"])
        averages = self.test_metrics.averages
        for name in averages:     # resume states written before the metrics lack them
            averages[name] = float(state.get(f"avg_test_tracking/{name}", 0.0))
        self.replay_buffer_initialized = bool(state["replay_buffer_initialized"])
        self.need_normalizer_update = bool(state["need_normalizer_update"])
        self.s_norm.mean_sq = np.array(state["s_norm/mean_sq"], dtype=np.float64)
        self.g_norm.mean_sq = np.array(state["g_norm/mean_sq"], dtype=np.float64)
        self.env.set_sample_count(self.total_sample_count)

"""AMPAgent's config: the discriminator, its buffers and the style reward (learning/agents/amp_agent.py)."""
from dataclasses import dataclass

from learning.configs.config import key, range_problems
from learning.configs.pg_agent import net_problems
from learning.configs.ppo_agent import PPOAgentConfig
from learning.disc_losses import DISC_LOSSES
from learning.models.amp_discriminator import COMPUTE_DTYPES


@dataclass(frozen=True, kw_only=True)
class AMPAgentConfig(PPOAgentConfig):
    task_reward_lerp: float = key("TaskRewardLerp", None)     # 0.5 unless the weights are given
    task_reward_weight: float = key("TaskRewardWeight", None)
    disc_reward_weight: float = key("DiscRewardWeight", None)
    disc_obs_steps: int = key("DiscObsSteps", 2)
    disc_loss: str = key("DiscLoss", "lsgan")
    disc_grad_penalty_inputs: str = key("DiscGradPenaltyInputs", "expert")
    disc_replay_samples: int = key("DiscReplaySamples", None)  # all from the agent buffer
    disc_net: str = key("DiscNet")
    disc_init_output_scale: float = key("DiscInitOutputScale", 1.0)
    disc_stepsize: float = key("DiscStepSize", 0.001)
    disc_momentum: float = key("DiscMomentum", 0.9)
    disc_weight_decay: float = key("DiscWeightDecay", 0.0)
    disc_logit_reg_weight: float = key("DiscLogitRegWeight", 0.0)
    disc_grad_penalty: float = key("DiscGradPenalty", 0.0)
    disc_batch_size: int = key("DiscBatchSize", 256)
    disc_steps_per_batch: int = key("DiscStepsPerBatch", 1)
    disc_expert_buffer_size: int = key("DiscExpertBufferSize", 100000)
    disc_agent_buffer_size: int = key("DiscAgentBufferSize", 100000)
    disc_compute_dtype: str = key("DiscComputeDtype", "float32")   # opt-in bfloat16: learning/models/amp_discriminator.py
    reward_scale: float = key("RewardScale", 1.0)

    def problems(self):
        yield from super().problems()
        yield from net_problems(("DiscNet", self.disc_net))
        weights_given = self.task_reward_weight is not None or self.disc_reward_weight is not None
        if self.task_reward_lerp is not None and weights_given:
            yield "TaskRewardLerp", "give either TaskRewardLerp or TaskRewardWeight / DiscRewardWeight, not both"
        yield from range_problems("in [0, 1]", ("TaskRewardLerp", self.task_reward_lerp))
        yield from range_problems(">= 0", ("TaskRewardWeight", self.task_reward_weight),
                                  ("DiscRewardWeight", self.disc_reward_weight))
        yield from range_problems(">= 2", ("DiscObsSteps", self.disc_obs_steps))
        for json_key, val, known in (("DiscLoss", self.disc_loss, DISC_LOSSES),
                                     ("DiscGradPenaltyInputs", self.disc_grad_penalty_inputs, ("expert", "both")),
                                     ("DiscComputeDtype", self.disc_compute_dtype, COMPUTE_DTYPES)):
            if val not in known:
                yield json_key, f"is {val!r}, expected one of {', '.join(known)}"
        if self.disc_replay_samples is not None and not 0 <= self.disc_replay_samples <= self.disc_batch_size:
            yield "DiscReplaySamples", (f"must be in [0, DiscBatchSize = {self.disc_batch_size}], "
                                        f"got {self.disc_replay_samples}")
        yield from range_problems("in [0, 1)", ("DiscMomentum", self.disc_momentum))
        yield from range_problems("> 0", ("DiscStepSize", self.disc_stepsize),
                                  ("DiscInitOutputScale", self.disc_init_output_scale), ("RewardScale", self.reward_scale),
                                  ("DiscBatchSize", self.disc_batch_size), ("DiscStepsPerBatch", self.disc_steps_per_batch),
                                  ("DiscExpertBufferSize", self.disc_expert_buffer_size),
                                  ("DiscAgentBufferSize", self.disc_agent_buffer_size))
        yield from range_problems(">= 0", ("DiscWeightDecay", self.disc_weight_decay),
                                  ("DiscLogitRegWeight", self.disc_logit_reg_weight),
                                  ("DiscGradPenalty", self.disc_grad_penalty))

    def reward_weights(self):
        """(style weight, task weight): TaskRewardLerp's (1 - w, w), else the two weights (defaults
        1 and 0: pure imitation)."""
        if self.task_reward_weight is None and self.disc_reward_weight is None:
            lerp = 0.5 if self.task_reward_lerp is None else self.task_reward_lerp
            return 1.0 - lerp, lerp
        return (1.0 if self.disc_reward_weight is None else self.disc_reward_weight,
                0.0 if self.task_reward_weight is None else self.task_reward_weight)

    @property
    def weighted(self):
        """True when the reward weights (not TaskRewardLerp) combine the rewards."""
        return self.task_reward_weight is not None or self.disc_reward_weight is not None

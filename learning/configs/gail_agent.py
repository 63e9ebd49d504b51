"""GAILAgent's config: the discriminator, the reward and the policy step (learning/agents/gail_agent.py)."""
from dataclasses import dataclass

from learning.configs.config import key, range_problems
from learning.configs.ppo_agent import PPOAgentConfig
from learning.disc_losses import DISC_REWARDS
from learning.models.gail_discriminator import DISC_ACTIVATIONS

POLICY_STEPS = ("PPO", "TRPO")      # learning/solvers/ppo_step.py, trpo_step.py
DISC_INPUTS = ("state_action", "state")     # what the discriminator sees of a transition


@dataclass(frozen=True, kw_only=True)
class GAILAgentConfig(PPOAgentConfig):
    policy_step: str = key("PolicyStep", "PPO")
    disc_hidden_layers: int = key("DiscHiddenLayers", 2)
    disc_hidden_units: int = key("DiscHiddenUnits", 100)
    disc_activation: str = key("DiscActivation", "tanh")
    disc_stepsize: float = key("DiscStepsize", 0.01)
    disc_steps_per_iter: int = key("DiscStepsPerIter", 1)
    disc_entropy_coef: float = key("DiscEntropyCoef", 0.001)
    disc_grad_penalty: float = key("DiscGradPenalty", 0.0)
    disc_expert_action_noise: bool = key("DiscExpertActionNoise", False)
    disc_inputs: str = key("DiscInputs", "state_action")
    disc_reward_type: str = key("DiscRewardType", "neg_log_one_minus_d")
    reward_scale: float = key("RewardScale", 1.0)
    trpo_max_kl: float = key("TRPOMaxKL", 0.01)
    trpo_damping: float = key("TRPODamping", 0.1)
    trpo_cg_iters: int = key("TRPOCGIters", 10)
    trpo_fvp_subsample: float = key("TRPOFVPSubsample", 0.1)
    trpo_line_search_steps: int = key("TRPOLineSearchSteps", 10)
    trpo_value_max_kl: float = key("TRPOValueMaxKL", 0.01)
    trpo_time_horizon: float = key("TRPOTimeHorizon", 600.0)
    trpo_learn_std: bool = key("TRPOLearnStd", True)

    def problems(self):
        yield from super().problems()
        for json_key, val, known in (("PolicyStep", self.policy_step, POLICY_STEPS),
                                     ("DiscActivation", self.disc_activation, tuple(DISC_ACTIVATIONS)),
                                     ("DiscRewardType", self.disc_reward_type, tuple(DISC_REWARDS)),
                                     ("DiscInputs", self.disc_inputs, DISC_INPUTS)):
            if val not in known:
                yield json_key, f"is {val!r}, expected one of {', '.join(known)}"
        if self.disc_expert_action_noise and self.disc_inputs == "state":
            yield "DiscExpertActionNoise", "noise on the expert's actions, which DiscInputs \"state\" does not show"
        yield from range_problems(">= 1", ("DiscHiddenUnits", self.disc_hidden_units),
                                  ("DiscStepsPerIter", self.disc_steps_per_iter), ("TRPOCGIters", self.trpo_cg_iters),
                                  ("TRPOLineSearchSteps", self.trpo_line_search_steps))
        yield from range_problems(">= 0", ("DiscHiddenLayers", self.disc_hidden_layers))
        yield from range_problems("> 0", ("DiscStepsize", self.disc_stepsize), ("RewardScale", self.reward_scale),
                                  ("TRPOMaxKL", self.trpo_max_kl), ("TRPOValueMaxKL", self.trpo_value_max_kl),
                                  ("TRPOTimeHorizon", self.trpo_time_horizon))
        yield from range_problems(">= 0", ("DiscEntropyCoef", self.disc_entropy_coef),
                                  ("DiscGradPenalty", self.disc_grad_penalty), ("TRPODamping", self.trpo_damping))
        yield from range_problems("in (0, 1]", ("TRPOFVPSubsample", self.trpo_fvp_subsample))

"""What ExactStablePD's dynamics come from: pybullet's calculateMassMatrix / calculateInverseDynamics
build their model once, when the body is created, so they do not see SimCharacter's changeDynamics inertias
(DeepMimic's shape inertias, which the simulation uses). A replacement of these calls by our own
dynamics must decide which inertias it takes; this pins the fact it has to compare against."""
import numpy as np
import pybullet as p
import pybullet_data

from env.anim.character import CharacterDesc
from env.sim.sim_character import URDF_PATH, URDF_SCALE, SimCharacter
from env.sim.world import World
from tests.test_sim_pd import start_state


def test_pybullet_mass_matrix_keeps_the_urdf_inertias():
    world = World(world_scale=0.25, timestep=1.0 / 600.0)
    desc = CharacterDesc.load("data/characters/humanoid3d.txt")
    sim = SimCharacter(world, desc)
    sim.set_state(*start_state(desc, np.random.default_rng(0), 1.5))
    fresh = p.loadURDF(f"{pybullet_data.getDataPath()}/{URDF_PATH}", [0, 0, 0],
                       globalScaling=world.scale / URDF_SCALE, flags=p.URDF_MAINTAIN_LINK_ORDER,
                       physicsClientId=world.client)
    c = world.client
    inertia_sim = np.array([p.getDynamicsInfo(sim.body, j, physicsClientId=c)[2] for j in sim.link_ids])
    inertia_urdf = np.array([p.getDynamicsInfo(fresh, j, physicsClientId=c)[2] for j in sim.link_ids])
    assert np.abs(inertia_sim - inertia_urdf).max() > 0.02 * np.abs(inertia_urdf).max()
    q, qd = sim.get_generalized_state()
    assert np.abs(qd).max() > 0.5  # the velocity terms of the bias take part
    mass_sim = np.array(p.calculateMassMatrix(sim.body, q, flags=1, physicsClientId=c))
    mass_urdf = np.array(p.calculateMassMatrix(fresh, q, flags=1, physicsClientId=c))
    np.testing.assert_allclose(mass_sim, mass_urdf, rtol=0, atol=1e-12)
    zero = [0.0] * len(qd)
    bias_sim = p.calculateInverseDynamics(sim.body, q, qd.tolist(), zero, flags=1, physicsClientId=c)
    bias_urdf = p.calculateInverseDynamics(fresh, q, qd.tolist(), zero, flags=1, physicsClientId=c)
    np.testing.assert_allclose(bias_sim, bias_urdf, rtol=0, atol=1e-12)

"""tree_dynamics' mass matrix and bias forces against pybullet's simulation, and the compiled stable PD
(TreeStablePD) against the stable-PD formula solved in numpy with them."""
import numpy as np
import pybullet as p
import pytest

from env.anim.character import CharacterDesc
from env.sim import tree_dynamics
from env.sim.ctrl_params import CtrlParams
from env.sim.pd_controller import ExactStablePD, TreeStablePD
from env.sim.sim_character import SimCharacter
from env.sim.world import World
from tests.test_sim_pd import random_targets, start_state

DT = 1.0 / 6000.0


# (character, its controller, world scale): the humanoid at DeepMimic's scale and at 1; the dog,
# whose bodies and joint frames are rotated and whose legs are revolute chains
CHARACTERS = [("humanoid3d", "humanoid3d_ctrl", 4.0), ("humanoid3d", "humanoid3d_ctrl", 1.0),
              ("dog3d", "dog3d_ctrl", 4.0)]


@pytest.fixture(scope="module", params=CHARACTERS, ids=lambda c: f"{c[0]}-scale{c[2]:g}")
def character(request):
    name, ctrl, scale = request.param
    desc = CharacterDesc.load(f"data/characters/{name}.txt")
    world = World(world_scale=scale, timestep=DT)
    sim = SimCharacter(world, desc)
    for link in [-1] + sim.link_ids:  # no contacts: one step is the free dynamics
        p.setCollisionFilterGroupMask(sim.body, link, 0, 0, physicsClientId=world.client)
    params = CtrlParams.load(f"data/controllers/{ctrl}.txt", desc)
    lim = np.array([j.torque_lim for j in desc.joints])
    pd = TreeStablePD(sim, params.kp, params.kd, lim)
    yield sim, pd, params, lim
    world.shutdown()


def random_state(sim, seed):
    rng = np.random.default_rng(seed)
    sim.set_state(*start_state(sim.desc, rng, 1.5))
    return rng


def test_model_reproduces_pybullet_forward_dynamics(character):
    """One free stepSimulation (semi-implicit Euler: qdot' = qdot + dt qddot(q, qdot)) must satisfy
    M qddot + C = 0 with our M and C."""
    sim, pd, _, _ = character
    model = tree_dynamics.TreeModel(sim.body, sim.client)
    for seed in range(3):
        random_state(sim, seed)
        q, qd = pd.generalized_state()
        mass, bias = tree_dynamics.mass_matrix_and_bias(q, qd, *model.arrays())
        p.stepSimulation(physicsClientId=sim.client)
        qdd = (pd.generalized_state()[1] - qd) / DT
        assert np.abs(mass @ qdd + bias).max() < 1e-9 * np.abs(bias).max()
        assert np.allclose(mass, mass.T, rtol=0, atol=0)
        assert np.linalg.eigvalsh(mass).min() > 0


def test_kinetic_energy_matches_link_states(character):
    sim, pd, _, _ = character
    model = tree_dynamics.TreeModel(sim.body, sim.client)
    random_state(sim, 7)
    q, qd = pd.generalized_state()
    mass, _ = tree_dynamics.mass_matrix_and_bias(q, qd, *model.arrays())
    energy = 0.5 * model.mass[0] * qd[:3] @ qd[:3]
    for link, st in enumerate(p.getLinkStates(sim.body, sim.link_ids, computeLinkVelocity=1,
                                              computeForwardKinematics=1, physicsClientId=sim.client)):
        rot = np.reshape(p.getMatrixFromQuaternion(st[1]), (3, 3))
        inertia = rot @ np.diag(model.inertia[link + 1]) @ rot.T
        v, w = np.array(st[6]), np.array(st[7])
        energy += 0.5 * model.mass[link + 1] * v @ v + 0.5 * w @ inertia @ w
    assert 0.5 * qd @ mass @ qd == pytest.approx(energy, rel=1e-10)


def test_gravity_forces_match_pybullet_inverse_dynamics(character):
    """At rest the joint rows of C are the gravity torques; pybullet's inverse dynamics agrees there
    (its base rows leave out the 0.0001 kg base link)."""
    sim, pd, _, _ = character
    model = tree_dynamics.TreeModel(sim.body, sim.client)
    random_state(sim, 3)
    q, qd = pd.generalized_state()
    _, bias = tree_dynamics.mass_matrix_and_bias(q, 0.0 * qd, *model.arrays())
    zeros = [0.0] * pd.size
    theirs = np.array(p.calculateInverseDynamics(sim.body, q.tolist(), zeros, zeros, flags=1,
                                                 physicsClientId=sim.client))[pd._compact_to_padded]
    assert np.allclose(bias[6:], theirs[6:], rtol=0, atol=1e-9 * np.abs(theirs).max())


def numpy_stable_pd(pd, q, qd, timestep):
    """The stable-PD formula (pd_controller docstring) in plain numpy with tree_dynamics' M and C."""
    mass, bias = tree_dynamics.mass_matrix_and_bias(q, qd, *pd._model_arrays)
    err = np.zeros(len(qd))
    sph_i = rev_i = 0
    qo, vo = 7, 6
    for sph in pd.is_sph:
        if sph:
            x, y, z, w = q[qo:qo + 4]
            quat = np.array([w, x, y, z])
            omega = np.concatenate([[0.0], qd[vo:vo + 3]])
            pred = quat + 0.5 * timestep * math_mul(quat, omega)
            e = math_mul(pred * [1, -1, -1, -1], pd._sph_targets[sph_i])
            e /= np.linalg.norm(e)
            if e[0] < 0:
                e = -e
            sin_half = np.linalg.norm(e[1:])
            err[vo:vo + 3] = e[1:] * 2 * np.arctan2(sin_half, e[0]) / sin_half
            sph_i, qo, vo = sph_i + 1, qo + 4, vo + 3
        else:
            err[vo] = pd._rev_targets[rev_i] - (q[qo] + timestep * qd[vo])
            rev_i, qo, vo = rev_i + 1, qo + 1, vo + 1
    kp, kd = pd._kp_compact, pd._kd_compact
    acc = np.linalg.solve(mass + timestep * np.diag(kd), kp * err - kd * qd - bias)
    return kp * err - kd * (qd + timestep * acc)


def math_mul(a, b):
    """Quaternion product, [w, x, y, z]."""
    return np.concatenate([[a[0] * b[0] - a[1:] @ b[1:]], a[0] * b[1:] + b[0] * a[1:] + np.cross(a[1:], b[1:])])


@pytest.mark.parametrize("seed", [0, 1])
def test_compiled_stable_pd_equals_numpy_formula(character, seed):
    sim, pd, params, lim = character
    rng = random_state(sim, seed)
    pd.set_targets(*random_targets(sim, rng))
    q, qd = pd.generalized_state()
    tau = pd.calc_torques(1.0 / 600.0)
    expected = numpy_stable_pd(pd, q, qd, 1.0 / 600.0)
    assert np.allclose(tau[pd._compact_to_padded], expected, rtol=0, atol=1e-9 * np.abs(expected).max())
    # the compiled clamp (what apply commands) saturates some joints at these targets and equals
    # ExactStablePD's numpy clamp of the same torques
    forces = pd.joint_forces(1.0 / 600.0)
    compiled_norms = pd.last_torque_norms.copy()
    norms = np.array([np.linalg.norm(f) for f in forces])
    assert np.any(compiled_norms > pd.torque_lim)
    assert np.all(norms <= pd.torque_lim * (1 + 1e-12))
    numpy_forces = ExactStablePD.clamped_joint_forces(pd, tau)
    assert [len(f) for f in forces] == [len(f) for f in numpy_forces]
    assert np.allclose(np.concatenate(forces), np.concatenate(numpy_forces), rtol=1e-12, atol=0)
    assert np.allclose(compiled_norms, pd.last_torque_norms, rtol=1e-12, atol=0)


def test_close_to_pybullet_mass_matrix_stable_pd(character):
    """ExactStablePD (pybullet's M and C) and TreeStablePD differ by pybullet's ~0.2% model error only."""
    sim, pd, params, lim = character
    rng = random_state(sim, 5)
    exact = ExactStablePD(sim, params.kp, params.kd, lim)
    targets = random_targets(sim, rng)
    exact.set_targets(*targets)
    pd.set_targets(*targets)
    ours, theirs = pd.calc_torques(1.0 / 600.0), exact.calc_torques(1.0 / 600.0)
    rows = pd._compact_to_padded[6:]
    assert np.abs(ours[rows] - theirs[rows]).max() < 0.02 * np.abs(theirs[rows]).max()


def test_tree_solve_is_the_dense_solve(character):
    """The sparse L^T D L solve (tree_dynamics._tree_solve) on M + dt Kd at random states: numpy's
    dense solve to 1e-12 relative; M's zeros (dof pairs on different branches) are where the tree
    says, so the factorization fills nothing in."""
    sim, pd, _, _ = character
    model = tree_dynamics.TreeModel(sim.body, sim.client)
    arrays = model.arrays()
    parents = tree_dynamics._dof_parents(model.jtype, model.chain, model.chain_len, model.num_v)
    ancestors = [set() for _ in range(model.num_v)]
    for k, parent in enumerate(parents):
        if parent >= 0:
            ancestors[k] = ancestors[parent] | {parent}
    related = np.array([[i == j or i in ancestors[j] or j in ancestors[i] for j in range(model.num_v)]
                        for i in range(model.num_v)])
    assert not related.all()                   # branches exist: the tree has zeros to keep
    for seed in range(3):
        random_state(sim, 20 + seed)
        q, qd = pd.generalized_state()
        mass, _ = tree_dynamics.mass_matrix_and_bias(q, qd, *arrays)
        assert np.all(mass[~related] == 0.0)
        a = mass + np.diag(1e-3 * pd._kd_compact)
        b = np.random.default_rng(seed).normal(size=model.num_v)
        x = tree_dynamics._tree_solve(a.copy(), b, parents)
        expected = np.linalg.solve(a, b)
        assert np.abs(x - expected).max() <= 1e-12 * np.abs(expected).max()

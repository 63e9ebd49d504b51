"""pybullet's C API called from compiled code: a stable-PD update with no Python in between.

Each pybullet function makes one command round trip to the physics server and builds Python
objects of the answer. The state a stable-PD update reads takes three of them
(getBasePositionAndOrientation, getBaseVelocity, getJointStatesMultiDof), each asking the server
for the body's whole actual state: ~8 us of Python per update, 6 of them in pybullet. The wheel also
exports the C API pybullet.c is written against. Made visible to LLVM's linker
(load_library_permanently), numba code calls it as external functions, and one actual-state
answer holds the body's q and qdot in tree_dynamics' compact layout, copied into arrays in ~1 us.

stable_pd_update does in one compiled call what TreeStablePD's Python path does: one state
request, tree_dynamics.clamped_joint_torques, and the torque command built joint by joint as
pybullet.c's setJointMotorControlMultiDofArray builds it (b3JointControlCommandInit2 in torque
mode, b3JointControlSetDesiredForceTorqueMultiDof at each joint's uIndex), then submitted. The same
calls on the same server: trajectories are bitwise those of the Python path
(tests/test_bullet_c_api.py).

A client's handle sits in pybullet.c's static table sPhysicsClients1, found in the wheel's symbol
table (env/sim/wheel_symbols.py). The compiled code reads the client's slot at every call; pybullet
zeroes it at disconnect, so a call on a closed client returns NOT_CONNECTED instead of using a freed
handle. The signatures below and the table are pybullet 3.2.7's (requirements.txt's pin): where
another version is installed (by its package metadata) or the symbols cannot be found (a stripped
build), available() says why and callers keep their Python path.
"""
import ctypes
from importlib import metadata

import llvmlite.binding
import numpy as np
import pybullet
from numba import carray, types
from numba.extending import intrinsic

from env.sim import tree_dynamics
from env.sim.wheel_symbols import wheel_addresses
from util.compiled_cache import cached_njit

PYBULLET_VERSION = "3.2.7"
CLIENT_TABLE = "sPhysicsClients1"
OK, NOT_CONNECTED, NO_STATE = 0, 1, 2

_i64, _i32 = types.int64, types.int32
# the C functions and their signatures; pointers and handles pass as 64-bit integers (the x86-64
# and AArch64 calling conventions pass both in the same registers)
C_FUNCTIONS = {"b3RequestActualStateCommandInit": _i64(_i64, _i32),
               "b3SubmitClientCommandAndWaitStatus": _i64(_i64, _i64),
               "b3GetStatusActualState": _i32(_i64, _i64, _i64, _i64, _i64, _i64, _i64, _i64),
               "b3JointControlCommandInit2": _i64(_i64, _i32, _i32),
               "b3JointControlSetDesiredForceTorqueMultiDof": _i32(_i64, _i32, _i64, _i32)}
_request_state, _submit, _actual_state, _joint_control, _set_torque = (
    types.ExternalFunction(name, signature) for name, signature in C_FUNCTIONS.items())

_found = None      # the client table's address, or the reason the C API cannot be used


def available():
    """True when compiled code can call the wheel's C API, else a string saying why not."""
    global _found
    if _found is None:
        _found = _find()
    return True if isinstance(_found, int) else _found


def _find():
    try:
        version = metadata.version("pybullet")
    except metadata.PackageNotFoundError:
        return "no installed pybullet package found"
    if version != PYBULLET_VERSION:
        return f"pybullet {version} is installed, the C calls are written for {PYBULLET_VERSION}"
    found = wheel_addresses((CLIENT_TABLE,))
    if isinstance(found, str):
        return found
    library = ctypes.CDLL(pybullet.__file__)
    missing = [name for name in C_FUNCTIONS if not hasattr(library, name)]
    if missing:
        return f"{pybullet.__file__} exports no {', '.join(missing)}"
    llvmlite.binding.load_library_permanently(pybullet.__file__)
    return found[CLIENT_TABLE]


def client_slot(client):
    """The address of the client's handle in pybullet.c's client table (read by the compiled calls)."""
    if available() is not True:
        raise RuntimeError(f"pybullet's C API is not available: {available()}")
    return _found + ctypes.sizeof(ctypes.c_void_p) * int(client)


def _pointer_cast(dtype):
    @intrinsic
    def cast(typingctx, address):
        def codegen(context, builder, signature, args):
            return builder.inttoptr(args[0], context.get_value_type(signature.return_type))
        return types.CPointer(dtype)(types.int64), codegen
    return cast


_as_double_ptr = _pointer_cast(types.float64)
_as_int64_ptr = _pointer_cast(types.int64)


@cached_njit
def _handle(slot):
    """The client's handle in its table slot (0 once pybullet has disconnected it)."""
    return carray(_as_int64_ptr(slot), 1)[0]


@cached_njit
def read_state(slot, body, q, qd):
    """q and qdot of `body` (compact layout) into q and qd from one actual-state request: OK, or
    NOT_CONNECTED, or NO_STATE (no such body, or its sizes are not q's and qd's)."""
    handle = _handle(slot)
    return NOT_CONNECTED if handle == 0 else _read_state(handle, body, q, qd)


@cached_njit
def _read_state(handle, body, q, qd):
    status = _submit(handle, _request_state(handle, body))
    sizes = np.zeros(3, dtype=np.int32)        # body id, number of q, number of qdot
    arrays = np.zeros(2, dtype=np.int64)       # addresses of q and qdot in the answer
    if _actual_state(status, sizes.ctypes.data, sizes[1:].ctypes.data, sizes[2:].ctypes.data, 0,
                     arrays.ctypes.data, arrays[1:].ctypes.data, 0) == 0:
        return NO_STATE
    if sizes[1] != q.shape[0] or sizes[2] != qd.shape[0]:
        return NO_STATE
    q[:] = carray(_as_double_ptr(arrays[0]), q.shape[0])
    qd[:] = carray(_as_double_ptr(arrays[1]), qd.shape[0])
    return OK


@cached_njit
def stable_pd_update(slot, body, torque_mode, u_index, u_size, q, qd, timestep, kp, kd, sph_targets, rev_targets,
                     limits, norms, parent, jtype, frame_pos, frame_rot, axis, inertial_pos, inertial_rot, mass,
                     inertia, q_start, v_start, chain, chain_len, gravity):
    """One stable-PD update of `body`: read its state (into q, qd), compute the clamped torques
    (tree_dynamics.clamped_joint_torques; norms receives the lengths before the clamp) and command
    them, joint k's u_size[k] torques at u-index u_index[k]. Returns read_state's code."""
    handle = _handle(slot)
    if handle == 0:
        return NOT_CONNECTED
    code = _read_state(handle, body, q, qd)
    if code != OK:
        return code
    tau = tree_dynamics.clamped_joint_torques(q, qd, timestep, kp, kd, sph_targets, rev_targets, limits, norms,
                                              parent, jtype, frame_pos, frame_rot, axis, inertial_pos,
                                              inertial_rot, mass, inertia, q_start, v_start, chain, chain_len,
                                              gravity)
    command = _joint_control(handle, body, torque_mode)
    at = 0
    for k in range(u_index.shape[0]):
        _set_torque(command, u_index[k], tau[at:].ctypes.data, u_size[k])
        at += u_size[k]
    _submit(handle, command)
    return OK

"""Headless rendering (in the render process): pixels where the camera projection puts them;
geometry; picking; HUD."""
import numpy as np
import pytest

from env.render import meshes
from env.render.camera import Camera
from env.render.draw_list import REF_ALPHA, Frame, Solid, build_frame
from env.render.gl_context import GLUnavailable
from env.render.hud import Hud
from env.render.picking import pick, ray_hit
from env.render.render_process import RenderProcess
from env.render.renderer import LIGHT_DIR, SHADOW_COLOR, SKY_COLOR
from env.deepmimic_env import DeepMimicEnv
from util.arg_parser import load_args

W, H = 320, 180
HEAD = 2  # the neck body is the head sphere
SKY = np.array(SKY_COLOR[:3]) * 255


@pytest.fixture(scope="module")
def scene():
    """The kin_char scene at the first frame of the walk clip."""
    env = DeepMimicEnv(load_args(["--arg_file", "args/kin_char_args.txt"]))
    yield env
    env.shutdown()


@pytest.fixture(scope="module")
def gl():
    process = RenderProcess(W, H, headless=True, msaa=0)
    yield process
    process.close()


def render(gl, frame, camera, hud_lines=(), values=None):
    return gl.draw(frame, camera, list(hud_lines), values).astype(float)


def chroma(rgb):
    rgb = np.asarray(rgb, dtype=float)
    return rgb / np.linalg.norm(rgb)


def test_character_pixels_where_projection_says(gl, scene):
    desc, body_pos, body_rot, _ = scene.draw_characters()[0]
    camera = Camera.side_view(scene.camera_focus(), W, H)
    image = render(gl, build_frame(scene.draw_characters()), camera)

    (hx, hy), _ = camera.project(body_pos[HEAD])
    head_px = image[int(hy), int(hx)]
    body_color = desc.bodies[HEAD].color[:3]
    assert np.linalg.norm(chroma(head_px) - chroma(body_color)) < 0.05   # lit body colour
    assert np.linalg.norm(head_px - SKY) > 60

    (sx, sy), _ = camera.project(body_pos[HEAD] + [0.0, 0.6, 0.0])        # above the head: sky
    assert np.allclose(image[int(sy), int(sx)], SKY, atol=2)
    (gx, gy), _ = camera.project(body_pos[0] * [1, 0, 1] + [0.8, 0.0, 1.0])  # on the floor: grey
    ground = image[int(gy), int(gx)]
    assert np.ptp(ground) < 12 and np.linalg.norm(chroma(ground) - chroma(body_color)) > 0.1


def test_reference_character_is_translucent(gl, scene):
    desc, pos, rot, _ = scene.draw_characters()[0]
    camera = Camera.side_view(scene.camera_focus(), W, H)
    (hx, hy), _ = camera.project(pos[HEAD] + [0.0, 0.6, 0.0])
    shifted = pos + [0.0, 0.6, 0.0]   # reference head drawn against the sky
    sim_and_ref = [(desc, pos, rot, "sim"), (desc, shifted, rot, "kin")]
    opaque = render(gl, build_frame([(desc, shifted, rot, "sim")]), camera)[int(hy), int(hx)]
    ghost = render(gl, build_frame(sim_and_ref), camera)[int(hy), int(hx)]
    hidden = render(gl, build_frame(sim_and_ref, draw_ref=False), camera)[int(hy), int(hx)]
    assert np.allclose(hidden, SKY, atol=2)
    assert np.allclose(ghost, REF_ALPHA * opaque + (1 - REF_ALPHA) * SKY, atol=4)


def test_shadow_darkens_ground_along_the_light(gl):
    ball = np.eye(4)
    ball[:3, 3] = [0.0, 1.0, 0.0]
    frame = Frame(solids=[Solid(("sphere", 0.3), ball, np.array([0.8, 0.2, 0.2, 1.0]))])
    camera = Camera.side_view([0.0, 0.5, 0.0], W, H)
    lit, empty = render(gl, frame, camera), render(gl, Frame(), camera)
    (sx, sy), _ = camera.project(ball[:3, 3] - LIGHT_DIR / LIGHT_DIR[1])   # shadow centre
    (ox, oy), _ = camera.project([0.5, 0.0, 0.3])                          # open ground
    darkened = (1 - SHADOW_COLOR[3]) * empty[int(sy), int(sx)]
    assert np.allclose(lit[int(sy), int(sx)], darkened, atol=3)
    assert np.allclose(lit[int(oy), int(ox)], empty[int(oy), int(ox)])


def test_hud_is_drawn_over_the_scene(gl, scene):
    camera = Camera.side_view(scene.camera_focus(), W, H)
    frame = build_frame(scene.draw_characters())
    plain = render(gl, frame, camera)
    image = render(gl, frame, camera, ["Time: 0.00 s"], values=np.full(20, 0.5))
    left, top, right, bottom = Hud(W, H).plot_rect()
    plot = image[top:bottom + 1, left:right + 1]
    assert ((plot[..., 2] > 150) & (plot[..., 0] < 100)).sum() > 20       # the blue value line
    text = image[6:22, 6:80]
    assert text.min() < 100 and plain[6:22, 6:80].min() > 150           # dark text on the sky
    assert np.allclose(image[H - 5, W // 2], plain[H - 5, W // 2])      # elsewhere unchanged


def test_missing_gl_driver_gives_one_line_install_hint(monkeypatch):
    """With no EGL vendor library found (as without libegl-mesa0) the error says what to install."""
    monkeypatch.setenv("__EGL_VENDOR_LIBRARY_FILENAMES", "/nonexistent.json")
    with pytest.raises(GLUnavailable) as err:
        RenderProcess(64, 64, headless=True)
    message = str(err.value)
    assert "\n" not in message and "apt-get install libegl1 libegl-mesa0 libgl1-mesa-dri" in message


def test_camera_projects_focus_to_centre_and_rays_back():
    camera = Camera.side_view([1.0, 0.9, -2.0], 800, 450)
    (px, py), depth = camera.project([1.0, 0.9, -2.0])
    assert np.allclose([px, py], [400, 225]) and -1 < depth < 1
    point = np.array([1.3, 1.2, -1.8])
    (qx, qy), _ = camera.project(point)
    origin, direction = camera.screen_ray(qx, qy)
    to_point = (point - origin) / np.linalg.norm(point - origin)
    assert np.allclose(direction, to_point, atol=1e-9)


def test_camera_zoom_pan_track():
    camera = Camera.side_view([0.0, 1.0, 0.0], 800, 450, track_mode="xz")
    dist = np.linalg.norm(camera.position - camera.focus)
    camera.zoom(2)
    assert np.isclose(np.linalg.norm(camera.position - camera.focus), dist * 0.81)
    offset = camera.position - camera.focus
    camera.pan(100, 0)   # drag right: the scene follows the mouse, so the camera moves left (-x)
    assert camera.focus[0] < 0 and np.allclose(camera.position - camera.focus, offset)
    before = camera.focus.copy()
    camera.track([5.0, 3.0, 2.0])             # the character moved by (5, 2, 2): follow x and z
    assert np.allclose(camera.focus, before + [5.0, 0.0, 2.0])
    assert np.allclose(camera.position - camera.focus, offset)
    still = Camera.side_view([0.0, 1.0, 0.0], 800, 450, track_mode="still")
    still.track([5.0, 3.0, 2.0])
    assert np.allclose(still.focus, [0.0, 1.0, 0.0])
    fixed = Camera.side_view([0.0, 1.0, 0.0], 800, 450, track_mode="fixed")
    eye = fixed.position.copy()
    fixed.track([5.0, 3.0, 2.0])
    assert np.allclose(fixed.focus, [5.0, 3.0, 2.0]) and np.allclose(fixed.position, eye)


@pytest.mark.parametrize("key", [("sphere", 0.3), ("capsule", 0.1, 0.3), ("box", 0.2, 0.1, 0.4)])
def test_meshes_lie_on_their_surface(key):
    positions, normals, indices = meshes.build(key)
    assert np.allclose(np.linalg.norm(normals, axis=1), 1, atol=1e-6)
    assert indices.max() < len(positions) and len(indices) % 3 == 0
    extent = positions.max(axis=0) - positions.min(axis=0)
    expected = {"sphere": [0.3] * 3, "capsule": [0.1, 0.4, 0.1], "box": [0.2, 0.1, 0.4]}[key[0]]
    assert np.allclose(extent, expected, atol=1e-6)
    tri = positions[indices.reshape(-1, 3)]
    face_n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    big = np.linalg.norm(face_n, axis=1) > 1e-9            # skip the pole's degenerate triangles
    centroid_out = tri.mean(axis=1)[big]                   # counter-clockwise seen from outside
    assert np.all(np.einsum("ij,ij->i", face_n[big], centroid_out) > 0)


def test_ray_hits_shapes_at_their_surface():
    model = np.eye(4)
    model[:3, 3] = [0.0, 1.0, 0.0]
    down = np.array([0.0, -1.0, 0.0])
    origin = np.array([0.0, 3.0, 0.0])
    assert np.isclose(ray_hit(origin, down, ("sphere", 0.4), model), 1.8)
    assert np.isclose(ray_hit(origin, down, ("capsule", 0.2, 0.6), model), 2.0 - 0.3 - 0.1)
    assert np.isclose(ray_hit(origin, down, ("box", 0.2, 0.5, 0.2), model), 1.75)
    side = np.array([1.0, 0.0, 0.0])
    assert np.isclose(ray_hit(np.array([-2.0, 1.2, 0.0]), side, ("capsule", 0.2, 0.6), model), 1.9)
    assert ray_hit(np.array([-2.0, 2.0, 0.0]), side, ("capsule", 0.2, 0.6), model) is None


def test_pick_returns_nearest_body(scene):
    frame = build_frame(scene.draw_characters())
    camera = Camera.side_view(scene.camera_focus(), 800, 450)
    _, pos, _, _ = scene.draw_characters()[0]
    (hx, hy), _ = camera.project(pos[HEAD])
    solid, point = pick(frame.solids, *camera.screen_ray(hx, hy))
    assert solid.body_id == HEAD
    assert np.isclose(np.linalg.norm(point - pos[HEAD]), 0.205 / 2)


def test_hud_text_and_plot():
    hud = Hud(400, 200)
    image = hud.render(["Time: 1.00 s"], values=np.linspace(0, 1, 50))
    left, top, right, bottom = hud.plot_rect()
    assert image[..., 3][8:20, 8:60].max() == 255                      # text pixels
    blue = (image[..., 2] > 150) & (image[..., 0] < 100) & (image[..., 3] == 255)
    ys, xs = np.nonzero(blue)
    assert xs.min() >= left and xs.max() <= right and ys.min() >= top and ys.max() <= bottom
    assert hud.render([], None)[..., 3].max() == 0

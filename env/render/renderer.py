"""Draws a Frame (draw_list.py) with OpenGL 3.3 core: ground grid, planar shadows, lit shapes,
translucent reference, lines, and the 2D overlay. Needs a current context (gl_context.py)."""
import ctypes

import numpy as np
from OpenGL import GL

from env.render import meshes
from env.render.shaders import (GROUND_FRAG, GROUND_VERT, OVERLAY_FRAG, OVERLAY_VERT,
                                SHAPE_FRAG, SHAPE_VERT, Program)

SKY_COLOR = (0.93, 0.95, 0.98, 1.0)
GROUND_COLOR = (0.80, 0.80, 0.78, 1.0)
GRID_COLOR = (0.52, 0.52, 0.52, 1.0)
SHADOW_COLOR = (0.0, 0.0, 0.0, 0.28)
LIGHT_DIR = np.array([0.35, 1.0, 0.45]) / np.linalg.norm([0.35, 1.0, 0.45])  # towards the light
GROUND_HALF_SIZE = 100.0
GROUND_FADE_DIST = 40.0
SHADOW_LIFT = 1e-3


def shadow_matrix(light_dir=LIGHT_DIR, lift=SHADOW_LIFT):
    """Projects points along the light direction onto the plane y = lift (a planar shadow)."""
    lx, ly, lz = light_dir
    return np.array([[1.0, -lx / ly, 0.0, 0.0],
                     [0.0, 0.0, 0.0, lift],
                     [0.0, -lz / ly, 1.0, 0.0],
                     [0.0, 0.0, 0.0, 1.0]])


class _GLMesh:
    """Interleaved position/normal buffer with an index buffer, in a vertex array."""

    def __init__(self, positions, normals, indices):
        self.vao = GL.glGenVertexArrays(1)
        GL.glBindVertexArray(self.vao)
        data = np.hstack([positions, normals]).astype(np.float32)
        self.vbo = GL.glGenBuffers(1)
        GL.glBindBuffer(GL.GL_ARRAY_BUFFER, self.vbo)
        GL.glBufferData(GL.GL_ARRAY_BUFFER, data.nbytes, data, GL.GL_STATIC_DRAW)
        self.ebo = GL.glGenBuffers(1)
        GL.glBindBuffer(GL.GL_ELEMENT_ARRAY_BUFFER, self.ebo)
        GL.glBufferData(GL.GL_ELEMENT_ARRAY_BUFFER, indices.nbytes, indices, GL.GL_STATIC_DRAW)
        stride = 6 * 4
        for loc, offset in ((0, 0), (1, 12)):
            GL.glEnableVertexAttribArray(loc)
            GL.glVertexAttribPointer(loc, 3, GL.GL_FLOAT, GL.GL_FALSE, stride, ctypes.c_void_p(offset))
        self.count = len(indices)
        GL.glBindVertexArray(0)

    def draw(self):
        GL.glBindVertexArray(self.vao)
        GL.glDrawElements(GL.GL_TRIANGLES, self.count, GL.GL_UNSIGNED_INT, None)


class _DynamicBuffer:
    """A vertex array over one float buffer refilled per draw (lines, the overlay quad)."""

    def __init__(self, components):
        self.components = components
        self.vao = GL.glGenVertexArrays(1)
        GL.glBindVertexArray(self.vao)
        self.vbo = GL.glGenBuffers(1)
        GL.glBindBuffer(GL.GL_ARRAY_BUFFER, self.vbo)
        GL.glEnableVertexAttribArray(0)
        GL.glVertexAttribPointer(0, components, GL.GL_FLOAT, GL.GL_FALSE, 0, None)
        GL.glBindVertexArray(0)

    def draw(self, points, mode):
        data = np.ascontiguousarray(points, dtype=np.float32)
        GL.glBindVertexArray(self.vao)
        GL.glBindBuffer(GL.GL_ARRAY_BUFFER, self.vbo)
        GL.glBufferData(GL.GL_ARRAY_BUFFER, data.nbytes, data, GL.GL_STREAM_DRAW)
        GL.glDrawArrays(mode, 0, len(data))


class Renderer:
    def __init__(self):
        self.shape_prog = Program(SHAPE_VERT, SHAPE_FRAG)
        self.ground_prog = Program(GROUND_VERT, GROUND_FRAG)
        self.overlay_prog = Program(OVERLAY_VERT, OVERLAY_FRAG)
        self._meshes = {}
        ground = np.array([[-1, 0, -1], [-1, 0, 1], [1, 0, 1], [1, 0, -1]], np.float32) * GROUND_HALF_SIZE
        self._ground = _GLMesh(ground, np.tile([0, 1, 0], (4, 1)).astype(np.float32),
                               np.array([0, 1, 2, 0, 2, 3], np.uint32))
        self._lines = _DynamicBuffer(3)
        self._quad = _DynamicBuffer(2)
        self._overlay_tex = GL.glGenTextures(1)
        GL.glBindTexture(GL.GL_TEXTURE_2D, self._overlay_tex)
        for param in (GL.GL_TEXTURE_MIN_FILTER, GL.GL_TEXTURE_MAG_FILTER):
            GL.glTexParameteri(GL.GL_TEXTURE_2D, param, GL.GL_NEAREST)

    def _mesh(self, key):
        if key not in self._meshes:
            self._meshes[key] = _GLMesh(*meshes.build(key))
        return self._meshes[key]

    def render(self, frame, camera, viewport, overlay=None):
        """Draws `frame` seen by `camera` into the bound framebuffer of size viewport (w, h)."""
        GL.glViewport(0, 0, *viewport)
        GL.glClearColor(*SKY_COLOR)
        GL.glClearStencil(0)
        GL.glDepthMask(GL.GL_TRUE)
        GL.glClear(GL.GL_COLOR_BUFFER_BIT | GL.GL_DEPTH_BUFFER_BIT | GL.GL_STENCIL_BUFFER_BIT)
        GL.glEnable(GL.GL_DEPTH_TEST)
        GL.glDepthFunc(GL.GL_LEQUAL)
        GL.glEnable(GL.GL_BLEND)
        GL.glBlendFunc(GL.GL_SRC_ALPHA, GL.GL_ONE_MINUS_SRC_ALPHA)
        view_proj = camera.view_proj()
        self._draw_ground(camera, view_proj)
        self.shape_prog.use()
        self.shape_prog.set_mat4("u_view_proj", view_proj)
        self.shape_prog.set_vec3("u_light_dir", LIGHT_DIR)
        self.shape_prog.set_vec3("u_eye", camera.position)
        self._draw_shadows(frame.solids)
        GL.glEnable(GL.GL_CULL_FACE)
        self._draw_solids(frame.solids)
        self._draw_lines(frame.lines)
        GL.glDepthMask(GL.GL_FALSE)
        self._draw_solids(frame.translucent)
        GL.glDepthMask(GL.GL_TRUE)
        GL.glDisable(GL.GL_CULL_FACE)
        if overlay is not None:
            self._draw_overlay(overlay)

    def _draw_ground(self, camera, view_proj):
        prog = self.ground_prog
        prog.use()
        model = np.eye(4)
        model[[0, 2], 3] = np.round(camera.focus[[0, 2]])  # follow the camera, on whole metres
        prog.set_mat4("u_model", model)
        prog.set_mat4("u_view_proj", view_proj)
        prog.set_vec3("u_eye", camera.position)
        prog.set_vec4("u_base", GROUND_COLOR)
        prog.set_vec4("u_line", GRID_COLOR)
        prog.set_vec4("u_sky", SKY_COLOR)
        prog.set_float("u_fade_dist", GROUND_FADE_DIST)
        self._ground.draw()

    def _draw_shadows(self, solids):
        """Each solid flattened onto the ground; the stencil darkens every pixel once."""
        GL.glDisable(GL.GL_DEPTH_TEST)
        GL.glEnable(GL.GL_STENCIL_TEST)
        GL.glStencilFunc(GL.GL_EQUAL, 0, 0xFF)
        GL.glStencilOp(GL.GL_KEEP, GL.GL_KEEP, GL.GL_INCR)
        self.shape_prog.set_int("u_lit", 0)
        self.shape_prog.set_vec4("u_color", SHADOW_COLOR)
        flatten = shadow_matrix()
        for solid in solids:
            self.shape_prog.set_mat4("u_model", flatten @ solid.model)
            self._mesh(solid.key).draw()
        GL.glDisable(GL.GL_STENCIL_TEST)
        GL.glEnable(GL.GL_DEPTH_TEST)

    def _draw_solids(self, solids):
        self.shape_prog.set_int("u_lit", 1)
        for solid in solids:
            self.shape_prog.set_mat4("u_model", solid.model)
            self.shape_prog.set_vec4("u_color", solid.color)
            self._mesh(solid.key).draw()

    def _draw_lines(self, lines):
        self.shape_prog.set_int("u_lit", 0)
        self.shape_prog.set_mat4("u_model", np.eye(4))
        for points, color in lines:
            if len(points) > 1:
                self.shape_prog.set_vec4("u_color", color)
                self._lines.draw(points, GL.GL_LINE_STRIP)

    def _draw_overlay(self, image):
        GL.glDisable(GL.GL_DEPTH_TEST)
        GL.glActiveTexture(GL.GL_TEXTURE0)
        GL.glBindTexture(GL.GL_TEXTURE_2D, self._overlay_tex)
        GL.glPixelStorei(GL.GL_UNPACK_ALIGNMENT, 1)
        height, width = image.shape[:2]
        GL.glTexImage2D(GL.GL_TEXTURE_2D, 0, GL.GL_RGBA8, width, height, 0, GL.GL_RGBA,
                        GL.GL_UNSIGNED_BYTE, np.ascontiguousarray(image))
        self.overlay_prog.use()
        self.overlay_prog.set_int("u_image", 0)
        self._quad.draw([[-1, -1], [1, -1], [1, 1], [-1, -1], [1, 1], [-1, 1]], GL.GL_TRIANGLES)
        GL.glEnable(GL.GL_DEPTH_TEST)

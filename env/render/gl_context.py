"""OpenGL contexts for the render process (render_process.py): a GLFW window, or an offscreen
EGL context for machines without a display.

PyOpenGL picks its platform (GLX or EGL) when OpenGL is first imported, so `select_platform`
runs before anything imports OpenGL. Headless rendering uses EGL's surfaceless platform (Mesa's
llvmpipe software renderer when no GPU is present) and draws into a framebuffer object; the
window uses GLFW with a GL 3.3 core context.
"""
import ctypes
import os

import numpy as np

HEADLESS_APT = "libegl1 libegl-mesa0 libgl1-mesa-dri libopengl0"
WINDOW_APT = "libgl1 libglx-mesa0 libgl1-mesa-dri"


class GLUnavailable(RuntimeError):
    """OpenGL could not start; the message says what to install or which option to use."""


def has_display():
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def select_platform(headless):
    """PyOpenGL on EGL (surfaceless unless EGL_PLATFORM says otherwise) when headless."""
    if headless:
        os.environ["PYOPENGL_PLATFORM"] = "egl"
        os.environ.setdefault("EGL_PLATFORM", "surfaceless")


def _describe(err):
    """One line for PyOpenGL's multi-line errors: 'EGL_BAD_PARAMETER in eglGetDisplay'."""
    operation = getattr(err, "baseOperation", None)
    if operation is not None:
        return f"{getattr(err.err, 'name', err.err)} in {getattr(operation, '__name__', operation)}"
    return " ".join(str(err).split())


class OffscreenContext:
    """EGL surfaceless context drawing into a (multisampled) framebuffer object."""

    def __init__(self, width, height, samples=4):
        self.width, self.height = width, height
        try:
            self._create_egl()
            from OpenGL import GL
            GL.glGetString(GL.GL_VERSION)
        except GLUnavailable:
            raise
        except Exception as err:  # missing libEGL / no Mesa driver: PyOpenGL raises many kinds
            raise GLUnavailable(
                f"headless OpenGL (EGL) failed ({_describe(err)}); install Mesa's EGL: "
                f"apt-get install {HEADLESS_APT}") from None
        self._create_framebuffers(samples)

    def _create_egl(self):
        from OpenGL import EGL
        self._egl = EGL
        self.display = EGL.eglGetDisplay(EGL.EGL_DEFAULT_DISPLAY)
        major, minor = EGL.EGLint(), EGL.EGLint()
        if not EGL.eglInitialize(self.display, ctypes.pointer(major), ctypes.pointer(minor)):
            raise GLUnavailable(f"eglInitialize failed; apt-get install {HEADLESS_APT}")
        attribs = (EGL.EGLint * 5)(EGL.EGL_RENDERABLE_TYPE, EGL.EGL_OPENGL_BIT,
                                   EGL.EGL_SURFACE_TYPE, EGL.EGL_PBUFFER_BIT, EGL.EGL_NONE)
        config, count = EGL.EGLConfig(), EGL.EGLint()
        EGL.eglChooseConfig(self.display, attribs, ctypes.pointer(config), 1, ctypes.pointer(count))
        if count.value < 1:
            raise GLUnavailable(f"EGL offers no desktop-OpenGL config; apt-get install {HEADLESS_APT}")
        EGL.eglBindAPI(EGL.EGL_OPENGL_API)
        self.context = EGL.eglCreateContext(self.display, config, EGL.EGL_NO_CONTEXT, None)
        if not self.context:
            raise GLUnavailable("eglCreateContext failed")
        if not EGL.eglMakeCurrent(self.display, EGL.EGL_NO_SURFACE, EGL.EGL_NO_SURFACE, self.context):
            raise GLUnavailable("eglMakeCurrent failed (surfaceless contexts need Mesa's EGL)")

    def _create_framebuffers(self, samples):
        from OpenGL import GL
        samples = min(samples, int(GL.glGetIntegerv(GL.GL_MAX_SAMPLES)))
        self.draw_fbo = self._framebuffer(samples)
        self.read_fbo = self._framebuffer(0) if samples else self.draw_fbo

    def _framebuffer(self, samples):
        from OpenGL import GL
        fbo = GL.glGenFramebuffers(1)
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, fbo)
        for attachment, fmt in ((GL.GL_COLOR_ATTACHMENT0, GL.GL_RGBA8),
                                (GL.GL_DEPTH_STENCIL_ATTACHMENT, GL.GL_DEPTH24_STENCIL8)):
            rbo = GL.glGenRenderbuffers(1)
            GL.glBindRenderbuffer(GL.GL_RENDERBUFFER, rbo)
            GL.glRenderbufferStorageMultisample(GL.GL_RENDERBUFFER, samples, fmt, self.width, self.height)
            GL.glFramebufferRenderbuffer(GL.GL_FRAMEBUFFER, attachment, GL.GL_RENDERBUFFER, rbo)
        status = GL.glCheckFramebufferStatus(GL.GL_FRAMEBUFFER)
        if status != GL.GL_FRAMEBUFFER_COMPLETE:
            raise GLUnavailable(f"offscreen framebuffer incomplete (status {status:#x})")
        return fbo

    def framebuffer_size(self):
        return self.width, self.height

    def begin_frame(self):
        from OpenGL import GL
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, self.draw_fbo)

    def read_pixels(self):
        """The last frame as (height, width, 3) uint8, top row first."""
        from OpenGL import GL
        if self.draw_fbo != self.read_fbo:
            GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, self.draw_fbo)
            GL.glBindFramebuffer(GL.GL_DRAW_FRAMEBUFFER, self.read_fbo)
            GL.glBlitFramebuffer(0, 0, self.width, self.height, 0, 0, self.width, self.height,
                                 GL.GL_COLOR_BUFFER_BIT, GL.GL_NEAREST)
        GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, self.read_fbo)
        GL.glPixelStorei(GL.GL_PACK_ALIGNMENT, 1)
        data = GL.glReadPixels(0, 0, self.width, self.height, GL.GL_RGB, GL.GL_UNSIGNED_BYTE)
        return np.frombuffer(data, np.uint8).reshape(self.height, self.width, 3)[::-1].copy()

    def close(self):
        if self.context:
            EGL = self._egl
            EGL.eglMakeCurrent(self.display, EGL.EGL_NO_SURFACE, EGL.EGL_NO_SURFACE, EGL.EGL_NO_CONTEXT)
            EGL.eglDestroyContext(self.display, self.context)
            self.context = None


class WindowContext:
    """A GLFW window with a GL 3.3 core context; the caller installs the input callbacks."""

    def __init__(self, width, height, title, samples=4):
        try:
            import glfw
        except Exception as err:
            raise GLUnavailable(f"GLFW could not load ({err}); pip install glfw, "
                                f"or run with --headless") from None
        self.glfw = glfw
        if not glfw.init():
            raise GLUnavailable("GLFW could not open the display; run with --headless "
                                f"(needs apt-get install {HEADLESS_APT})")
        glfw.window_hint(glfw.CONTEXT_VERSION_MAJOR, 3)
        glfw.window_hint(glfw.CONTEXT_VERSION_MINOR, 3)
        glfw.window_hint(glfw.OPENGL_PROFILE, glfw.OPENGL_CORE_PROFILE)
        glfw.window_hint(glfw.OPENGL_FORWARD_COMPAT, True)
        glfw.window_hint(glfw.SAMPLES, samples)
        glfw.window_hint(glfw.STENCIL_BITS, 8)
        if os.environ.get("PYOPENGL_PLATFORM") == "egl":
            glfw.window_hint(glfw.CONTEXT_CREATION_API, glfw.EGL_CONTEXT_API)
        self.window = glfw.create_window(width, height, title, None, None)
        if not self.window:
            glfw.terminate()
            raise GLUnavailable(f"could not create a GL 3.3 window; apt-get install {WINDOW_APT}, "
                                "or run with --headless")
        glfw.make_context_current(self.window)
        glfw.swap_interval(0)

    def framebuffer_size(self):
        return self.glfw.get_framebuffer_size(self.window)

    def begin_frame(self):
        from OpenGL import GL
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, 0)

    def end_frame(self):
        self.glfw.swap_buffers(self.window)

    def should_close(self):
        return self.glfw.window_should_close(self.window)

    def close(self):
        self.glfw.destroy_window(self.window)
        self.glfw.terminate()

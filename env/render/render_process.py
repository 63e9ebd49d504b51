"""The OpenGL side of the viewer, in a child process (python -m env.render.render_process).

Why a process: Mesa's software renderer (llvmpipe) and TensorFlow each carry a copy of LLVM;
loaded into one process they resolve each other's symbols and crash (whichever comes first).
So the process running the world never loads OpenGL: it sends each frame's draw list, camera and
HUD text down a socket, and gets back the image (headless) or the window's input events.

Events (window): ('char', str), ('key', 'escape'|'left'|'right'|'up'|'down') (keys that type no
character: GLFW key codes by name, at a press and at each repeat while held),
('mouse_button', 'left'|'right', pressed, x, y),
('cursor', x, y), ('scroll', steps), ('resize', width, height), ('close',).
"""
import os
import socket
import subprocess
import sys
from multiprocessing.connection import Connection
from pathlib import Path

from env.render.gl_context import GLUnavailable

START_TIMEOUT_S = 60
PROJECT_ROOT = Path(__file__).resolve().parents[2]


class RenderProcess:
    def __init__(self, width, height, headless, msaa=4, title="DeepMimic"):
        parent_sock, child_sock = socket.socketpair()
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [str(PROJECT_ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
        args = [str(child_sock.fileno()), str(width), str(height), str(int(headless)), str(msaa), title]
        self.proc = subprocess.Popen([sys.executable, "-m", "env.render.render_process", *args],
                                     pass_fds=[child_sock.fileno()], env=env)
        child_sock.close()
        self.conn = Connection(parent_sock.detach())
        if not self.conn.poll(START_TIMEOUT_S):
            self.close()
            raise GLUnavailable(f"the render process did not start within {START_TIMEOUT_S} s")
        kind, payload = self._receive()
        if kind == "error":
            self.close()
            raise GLUnavailable(payload)
        self.gl_info = payload

    def _receive(self):
        try:
            return self.conn.recv()
        except (EOFError, ConnectionResetError):
            code = self.proc.wait(5)
            raise GLUnavailable(f"the render process died (exit code {code})") from None

    def draw(self, frame, camera, hud_lines, values=None):
        """Renders; returns the image (headless: (h, w, 3) uint8) or the window's new events."""
        self.conn.send(("draw", frame, camera, hud_lines, values))
        return self._receive()[1]

    def close(self):
        if self.proc.poll() is None:
            try:
                self.conn.send(("close",))
                self.proc.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self.conn.close()


def serve(conn, width, height, headless, msaa, title):
    """The child: owns the context, renders each frame it is sent, until 'close'."""
    from env.render.gl_context import select_platform
    select_platform(headless)
    try:
        if headless:
            from env.render.gl_context import OffscreenContext
            ctx = OffscreenContext(width, height, samples=msaa)
        else:
            from env.render.gl_context import WindowContext
            ctx = WindowContext(width, height, title, samples=msaa)
        from OpenGL import GL

        from env.render.hud import Hud
        from env.render.renderer import Renderer
        renderer, hud = Renderer(), Hud(width, height)
        info = f"{GL.glGetString(GL.GL_VERSION).decode()} / {GL.glGetString(GL.GL_RENDERER).decode()}"
    except GLUnavailable as err:
        conn.send(("error", str(err)))
        return
    events = []
    if not headless:
        install_window_callbacks(ctx.glfw, ctx.window, events, hud)
    conn.send(("ready", info))
    while True:
        try:
            message = conn.recv()
        except EOFError:       # the parent is gone
            break
        if message[0] == "close":
            break
        _, frame, camera, hud_lines, values = message
        ctx.begin_frame()
        renderer.render(frame, camera, ctx.framebuffer_size(), hud.render(hud_lines, values))
        if headless:
            conn.send(("image", ctx.read_pixels()))
        else:
            ctx.end_frame()
            ctx.glfw.poll_events()
            if ctx.should_close():
                events.append(("close",))
            conn.send(("events", list(events)))
            events.clear()
    ctx.close()


def install_window_callbacks(glfw, window, events, hud):
    """GLFW callbacks that append the events listed in the module docstring."""
    buttons = {glfw.MOUSE_BUTTON_LEFT: "left", glfw.MOUSE_BUTTON_RIGHT: "right"}
    keys = {glfw.KEY_ESCAPE: "escape", glfw.KEY_LEFT: "left", glfw.KEY_RIGHT: "right",
            glfw.KEY_UP: "up", glfw.KEY_DOWN: "down"}

    def on_key(_win, key, _scancode, action, _mods):
        if key in keys and action in (glfw.PRESS, glfw.REPEAT):
            events.append(("key", keys[key]))

    def on_mouse_button(win, button, action, _mods):
        if button in buttons:
            events.append(("mouse_button", buttons[button], action == glfw.PRESS, *glfw.get_cursor_pos(win)))

    def on_resize(_win, width, height):
        if width > 0 and height > 0:
            hud.width, hud.height = width, height
            events.append(("resize", width, height))

    glfw.set_key_callback(window, on_key)
    glfw.set_char_callback(window, lambda _win, codepoint: events.append(("char", chr(codepoint))))
    glfw.set_mouse_button_callback(window, on_mouse_button)
    glfw.set_cursor_pos_callback(window, lambda _win, x, y: events.append(("cursor", x, y)))
    glfw.set_scroll_callback(window, lambda _win, _dx, dy: events.append(("scroll", dy)))
    glfw.set_window_size_callback(window, on_resize)


if __name__ == "__main__":
    fd, w, h, headless_flag, samples, window_title = sys.argv[1:7]
    serve(Connection(int(fd)), int(w), int(h), headless_flag == "1", int(samples), window_title)

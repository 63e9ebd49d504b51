"""GLSL 3.30 core programs: lit shapes (also flat for shadows and lines), the grid ground, the
2D overlay. They run on Mesa's llvmpipe as well as on GPUs."""
from OpenGL import GL

SHAPE_VERT = """
#version 330 core
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec3 a_normal;
uniform mat4 u_model;
uniform mat4 u_view_proj;
out vec3 v_world;
out vec3 v_normal;
void main() {
    vec4 world = u_model * vec4(a_pos, 1.0);
    v_world = world.xyz;
    v_normal = mat3(u_model) * a_normal;
    gl_Position = u_view_proj * world;
}
"""

# Hemisphere ambient + Lambert diffuse + a little Blinn-Phong specular; u_lit = 0 draws flat
# u_color (shadows, lines).
SHAPE_FRAG = """
#version 330 core
in vec3 v_world;
in vec3 v_normal;
uniform vec4 u_color;
uniform vec3 u_light_dir;
uniform vec3 u_eye;
uniform int u_lit;
out vec4 frag_color;
void main() {
    if (u_lit == 0) { frag_color = u_color; return; }
    vec3 n = normalize(v_normal);
    vec3 view = normalize(u_eye - v_world);
    float diffuse = max(dot(n, u_light_dir), 0.0);
    float sky = 0.5 + 0.5 * n.y;
    float ambient = mix(0.25, 0.45, sky);
    vec3 half_vec = normalize(u_light_dir + view);
    float spec = pow(max(dot(n, half_vec), 0.0), 40.0) * 0.25 * step(0.0, diffuse);
    vec3 rgb = u_color.rgb * (ambient + 0.7 * diffuse) + vec3(spec);
    frag_color = vec4(rgb, u_color.a);
}
"""

GROUND_VERT = """
#version 330 core
layout(location = 0) in vec3 a_pos;
uniform mat4 u_model;
uniform mat4 u_view_proj;
out vec3 v_world;
void main() {
    vec4 world = u_model * vec4(a_pos, 1.0);
    v_world = world.xyz;
    gl_Position = u_view_proj * world;
}
"""

# Anti-aliased grid lines (1 m, with 0.25 m minor lines) faded into the sky colour far away.
GROUND_FRAG = """
#version 330 core
in vec3 v_world;
uniform vec3 u_eye;
uniform vec4 u_base;
uniform vec4 u_line;
uniform vec4 u_sky;
uniform float u_fade_dist;
out vec4 frag_color;
float grid(float spacing) {
    vec2 coord = v_world.xz / spacing;
    vec2 dist = abs(fract(coord - 0.5) - 0.5) / max(fwidth(coord), vec2(1e-6));
    return 1.0 - min(min(dist.x, dist.y), 1.0);
}
void main() {
    float line = max(grid(1.0), 0.4 * grid(0.25));
    vec3 rgb = mix(u_base.rgb, u_line.rgb, line);
    float fade = smoothstep(0.3 * u_fade_dist, u_fade_dist, length(v_world.xz - u_eye.xz));
    frag_color = vec4(mix(rgb, u_sky.rgb, fade), 1.0);
}
"""

OVERLAY_VERT = """
#version 330 core
layout(location = 0) in vec2 a_pos;
out vec2 v_uv;
void main() {
    v_uv = vec2(0.5 * (a_pos.x + 1.0), 0.5 * (1.0 - a_pos.y));
    gl_Position = vec4(a_pos, 0.0, 1.0);
}
"""

OVERLAY_FRAG = """
#version 330 core
in vec2 v_uv;
uniform sampler2D u_image;
out vec4 frag_color;
void main() { frag_color = texture(u_image, v_uv); }
"""


def _compile(kind, source):
    shader = GL.glCreateShader(kind)
    GL.glShaderSource(shader, source)
    GL.glCompileShader(shader)
    if not GL.glGetShaderiv(shader, GL.GL_COMPILE_STATUS):
        raise RuntimeError("shader compile error: " + GL.glGetShaderInfoLog(shader).decode())
    return shader


class Program:
    """A linked program with its uniform locations looked up by name."""

    def __init__(self, vert_src, frag_src):
        vert = _compile(GL.GL_VERTEX_SHADER, vert_src)
        frag = _compile(GL.GL_FRAGMENT_SHADER, frag_src)
        self.id = GL.glCreateProgram()
        GL.glAttachShader(self.id, vert)
        GL.glAttachShader(self.id, frag)
        GL.glLinkProgram(self.id)
        if not GL.glGetProgramiv(self.id, GL.GL_LINK_STATUS):
            raise RuntimeError("shader link error: " + GL.glGetProgramInfoLog(self.id).decode())
        GL.glDeleteShader(vert)
        GL.glDeleteShader(frag)
        self._locations = {}

    def loc(self, name):
        if name not in self._locations:
            self._locations[name] = GL.glGetUniformLocation(self.id, name)
        return self._locations[name]

    def use(self):
        GL.glUseProgram(self.id)

    def set_mat4(self, name, mat):
        GL.glUniformMatrix4fv(self.loc(name), 1, GL.GL_TRUE, mat.astype("float32"))

    def set_vec3(self, name, vec):
        GL.glUniform3f(self.loc(name), *map(float, vec))

    def set_vec4(self, name, vec):
        GL.glUniform4f(self.loc(name), *map(float, vec))

    def set_int(self, name, value):
        GL.glUniform1i(self.loc(name), int(value))

    def set_float(self, name, value):
        GL.glUniform1f(self.loc(name), float(value))

#version 330
uniform mat4 u_view_proj;
uniform mat4 u_model;
uniform mat3 u_normal_mat;
in vec3 in_pos;
in vec3 in_normal;
in vec2 in_uv;
out vec3 v_world;
out vec3 v_normal;
out vec2 v_uv;
void main() {
    vec4 w = u_model * vec4(in_pos, 1.0);
    v_world = w.xyz;
    v_normal = u_normal_mat * in_normal;
    v_uv = in_uv;
    gl_Position = u_view_proj * w;
}

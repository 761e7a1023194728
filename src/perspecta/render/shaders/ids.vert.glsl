#version 330
// Shared by the shadow pass (depth only) and the id/depth pass.
uniform mat4 u_view_proj;
uniform mat4 u_model;
in vec3 in_pos;
out vec3 v_world;
void main() {
    vec4 w = u_model * vec4(in_pos, 1.0);
    v_world = w.xyz;
    gl_Position = u_view_proj * w;
}

#version 330
// r = camera-frame z (OpenCV, metres), g = instance id, b = distance from the eye
// (informational), a = hit marker.
uniform vec3 u_eye;
uniform vec3 u_forward;
uniform float u_instance;
in vec3 v_world;
out vec4 f_out;
void main() {
    vec3 d = v_world - u_eye;
    f_out = vec4(dot(d, u_forward), u_instance, length(d), 1.0);
}

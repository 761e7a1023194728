#version 330
// One triangle covering the viewport, no vertex buffer needed.
void main() {
    vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
    gl_Position = vec4(p * 2.0 - 1.0, 1.0, 1.0);  // at the far plane (sky is drawn last)
}

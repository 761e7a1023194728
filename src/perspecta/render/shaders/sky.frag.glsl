#version 330
// Vertical sky gradient from each pixel's world-space view ray.
uniform mat3 u_ray;       // world ray = u_ray * (u, v, 1), pixel coords of the output image
uniform float u_ssaa;
uniform vec3 u_zenith;    // linear
uniform vec3 u_horizon;   // linear
out vec4 f_color;
void main() {
    vec2 uv = gl_FragCoord.xy / u_ssaa;
    vec3 d = normalize(u_ray * vec3(uv, 1.0));
    float t = smoothstep(-0.05, 0.6, d.z);
    f_color = vec4(mix(u_horizon, u_zenith, t), 1.0);
}

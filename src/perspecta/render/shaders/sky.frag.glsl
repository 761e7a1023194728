#version 330
// Background from each pixel's world-space view ray: a vertical sky gradient, or an
// equirectangular environment map (Blender's mapping, turned by u_env_yaw).
uniform mat3 u_ray;       // world ray = u_ray * (u, v, 1), pixel coords of the output image
uniform float u_ssaa;
uniform vec3 u_zenith;    // linear
uniform vec3 u_horizon;   // linear
uniform int u_env_mode;   // 0 gradient, 1 environment map
uniform sampler2D u_env;  // linear radiance, exposure applied; v = 0 at the bottom row
uniform float u_env_yaw;  // radians, counter-clockwise seen from above
out vec4 f_color;
const float PI = 3.14159265358979;
void main() {
    vec2 uv = gl_FragCoord.xy / u_ssaa;
    vec3 d = normalize(u_ray * vec3(uv, 1.0));
    if (u_env_mode == 1) {
        float lon = atan(d.y, d.x) - u_env_yaw;
        float u = 0.5 - lon / (2.0 * PI);
        float v = 0.5 + asin(clamp(d.z, -1.0, 1.0)) / PI;
        f_color = vec4(texture(u_env, vec2(u, v)).rgb, 1.0);
        return;
    }
    float t = smoothstep(-0.05, 0.6, d.z);
    f_color = vec4(mix(u_horizon, u_zenith, t), 1.0);
}

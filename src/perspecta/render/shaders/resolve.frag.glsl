#version 330
// Box-filter the SSAA samples in linear light, then encode sRGB (8-bit target).
// Compiled twice: with MSAA defined the source is multisampled (u_samples per texel).
#ifdef MSAA
uniform sampler2DMS u_src;
#else
uniform sampler2D u_src;
#endif
uniform int u_factor;
uniform int u_samples;
out vec4 f_color;
vec3 linear_to_srgb(vec3 c) {
    c = clamp(c, 0.0, 1.0);
    return mix(c * 12.92, 1.055 * pow(c, vec3(1.0 / 2.4)) - 0.055, step(vec3(0.0031308), c));
}
void main() {
    ivec2 base = ivec2(gl_FragCoord.xy) * u_factor;
    vec3 s = vec3(0.0);
    for (int i = 0; i < u_factor; i++) {
        for (int j = 0; j < u_factor; j++) {
#ifdef MSAA
            for (int k = 0; k < u_samples; k++) s += texelFetch(u_src, base + ivec2(i, j), k).rgb;
#else
            s += texelFetch(u_src, base + ivec2(i, j), 0).rgb;
#endif
        }
    }
    s /= float(u_factor * u_factor * max(u_samples, 1));
    f_color = vec4(linear_to_srgb(s), 1.0);
}

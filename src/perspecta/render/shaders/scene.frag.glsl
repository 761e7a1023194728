#version 330
// Linear-space shading: hemispherical sky/ground ambient + sun with a PCF shadow map
// + an unshadowed sky fill from the side opposite the sun + an optional interior
// point fill, plus a small sun highlight and a Fresnel sky reflection on objects.
// Why the last two and the albedo floor: a black object lit only by diffuse light is
// a flat silhouette; real black paint or plastic (~4% albedo) shows its shape through
// reflections. Output is linear RGB; the resolve pass averages the SSAA samples and
// encodes sRGB.
uniform vec3 u_eye;
uniform vec3 u_albedo;          // linear RGB
uniform int u_texture_mode;     // 0 none, 1 texture, 2 texture luminance * albedo (tinted)
uniform sampler2D u_tex;
uniform int u_has_shadow;
uniform sampler2DShadow u_shadow;
uniform mat4 u_light_vp;
uniform float u_texel_world;    // shadow-map texel size in metres
uniform float u_depth_range;    // metres covered by the shadow map's depth [0, 1]
uniform vec3 u_sun_dir;         // unit vector from the sun toward the scene
uniform vec3 u_sun_rgb;         // linear colour * intensity
uniform vec3 u_ambient_rgb;     // linear sky ambient (light from straight above)
uniform vec3 u_ambient_down_rgb;  // linear ground bounce (light from straight below)
uniform vec3 u_sky_dir;         // unit vector from the sky fill toward the scene
uniform vec3 u_sky_rgb;         // sky fill colour * intensity (unshadowed)
uniform float u_specular;       // sun highlight and sky reflection strength (0: off)
uniform float u_albedo_floor;   // darkest linear albedo (0: off)
uniform vec3 u_fill_pos;
uniform vec3 u_fill_rgb;        // zero outdoors
in vec3 v_world;
in vec3 v_normal;
in vec2 v_uv;
out vec4 f_color;

vec3 srgb_to_linear(vec3 c) {
    return mix(c / 12.92, pow((c + 0.055) / 1.055, vec3(2.4)), step(vec3(0.04045), c));
}

float sun_visibility(vec3 p, vec3 n, float ndl) {
    // normal offset plus a slope-scaled bias wide enough for the PCF kernel (+-2.5
    // texels): a surface at angle theta to the light changes depth by tan(theta) per texel
    vec4 l = u_light_vp * vec4(p + n * u_texel_world, 1.0);
    float slope = min(sqrt(max(1.0 - ndl * ndl, 0.0)) / max(ndl, 1e-3), 10.0);
    float bias = u_texel_world * (1.0 + 2.5 * slope) / u_depth_range;
    vec3 s = l.xyz * 0.5 + 0.5;  // orthographic: w == 1
    if (s.x < 0.0 || s.x > 1.0 || s.y < 0.0 || s.y > 1.0) return 1.0;
    float ref = min(s.z, 1.0) - bias;
    vec2 texel = 1.0 / vec2(textureSize(u_shadow, 0));
    float sum = 0.0;
    for (int i = -1; i <= 1; i++) {
        for (int j = -1; j <= 1; j++) {
            sum += texture(u_shadow, vec3(s.xy + vec2(i, j) * texel * 1.5, ref));
        }
    }
    return sum / 9.0;
}

void main() {
    vec3 n = normalize(v_normal);
    vec3 to_eye = u_eye - v_world;
    if (dot(n, to_eye) < 0.0) n = -n;  // two-sided: soups may have inconsistent winding

    vec3 albedo = u_albedo;
    if (u_texture_mode != 0) {
        vec3 t = srgb_to_linear(texture(u_tex, v_uv).rgb);
        if (u_texture_mode == 1) {
            albedo = t;
        } else {
            float lum = dot(t, vec3(0.2126, 0.7152, 0.0722));
            albedo = u_albedo * clamp(lum * 2.0, 0.0, 1.0);
        }
    }

    albedo = max(albedo, vec3(u_albedo_floor));
    float ndl = max(dot(n, -u_sun_dir), 0.0);
    float vis = 1.0;
    if (u_has_shadow != 0 && ndl > 0.0) vis = sun_visibility(v_world, n, ndl);
    vec3 hemi = mix(u_ambient_down_rgb, u_ambient_rgb, n.z * 0.5 + 0.5);
    vec3 light = hemi + u_sun_rgb * ndl * vis;
    light += u_sky_rgb * max(dot(n, -u_sky_dir), 0.0);
    vec3 to_fill = u_fill_pos - v_world;
    light += u_fill_rgb * max(dot(n, normalize(to_fill)), 0.0);
    vec3 colour = albedo * light;
    if (u_specular > 0.0) {
        vec3 v = normalize(to_eye);
        float ndv = max(dot(n, v), 0.0);
        vec3 h = normalize(v - u_sun_dir);
        colour += u_specular * u_sun_rgb * vis * ndl * pow(max(dot(n, h), 0.0), 40.0);
        float fresnel = 0.04 + 0.96 * pow(1.0 - ndv, 5.0);
        vec3 r = reflect(-v, n);
        vec3 env = mix(u_ambient_down_rgb, u_ambient_rgb, smoothstep(-0.2, 0.4, r.z));
        colour += u_specular * fresnel * env;
    }
    f_color = vec4(colour, 1.0);
}

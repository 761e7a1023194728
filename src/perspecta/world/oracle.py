"""The geometry oracle: every benchmark answer is computed here from the 3D scene record.

Answers are never read off 2D heuristics (DESIGN.md); generators call these pure
functions on a :class:`~perspecta.world.scene.Scene`'s objects and cameras, store the
inputs in item metadata, and can re-derive any answer later.

This module is the one import point; the code lives in two halves:

* :mod:`perspecta.world.orientation` — camera-free geometry: angle wrapping, object
  facing (egocentric, view parallelism, DORI labels), inter-object orientation,
  object-frame and hypothetical-observer relations, observer/object moves and a
  camera's ground axes, distances.
* :mod:`perspecta.world.viewing` — viewer-dependent geometry: projected boxes, image
  regions, in-view tests, viewer-frame left/right, front/behind, near/far, motion
  directions, instance-mask visibility and occlusion, equirect panoramas, FOV, and the
  camera's own direction (heading, orbit azimuth/elevation, points ahead of it).

Rotation matrices and Euler angles (object poses) live in :mod:`perspecta.world.rotation`.

Sign conventions at a glance (degrees everywhere):

=========================  ===========================================================
yaw, rotate_about_vertical  counter-clockwise seen from above is positive
egocentric_facing           0 = faces camera, +-180 = away, + = front toward image RIGHT
bearing / object frame      0 = ahead, + = LEFT (CCW), - = right, 180 = behind
move_camera(turn=...)       + = clockwise from above = turn RIGHT
panorama_longitude          0 = forward, + = to the RIGHT, seam at +-180
=========================  ===========================================================
"""

from __future__ import annotations

from perspecta.world.orientation import (
    CANNOT_DETERMINE,
    PointLike,
    back_to_back,
    bbox_distance,
    bearing,
    bearing_in_frame,
    camera_motion_direction,
    camera_plane_angle,
    camera_turn,
    ccw_to_clockwise,
    closest,
    direction_from_heading,
    distance,
    dominant_direction,
    egocentric_facing,
    faces,
    facing_each_other,
    facing_label,
    farthest,
    front_xy,
    ground_axes,
    ground_unit,
    heading,
    heading_matches_motion,
    heading_of,
    move_camera,
    observer_relation,
    observer_side,
    point_of,
    rank_by_distance,
    relation_in_frame,
    relative_orientation_label,
    rotate_about_vertical,
    rotation_to_face,
    rotation_to_face_camera,
    side_in_frame,
    signed_angle_xy,
    turn_direction,
    wrap180,
    wrap360,
    yaw_difference,
)
from perspecta.world.viewing import (
    camera_azimuth,
    camera_depth,
    camera_distance,
    camera_elevation,
    camera_yaw,
    depth_order,
    front_behind,
    ground_ahead,
    horizontal_fov,
    image_region,
    in_fov,
    in_view,
    left_right,
    longitude_extent,
    longitude_separation,
    mask_area,
    mask_bbox,
    motion_direction,
    near_far,
    nearest_to_longitude,
    objects_in_fov,
    occlusion_level,
    panorama_latitude,
    panorama_longitude,
    panorama_pixel,
    projected_bbox,
    straddles_seam,
    view_fraction,
    visible_fraction,
)

__all__ = [
    "CANNOT_DETERMINE",
    "PointLike",
    "back_to_back",
    "bbox_distance",
    "bearing",
    "bearing_in_frame",
    "camera_azimuth",
    "camera_depth",
    "camera_distance",
    "camera_elevation",
    "camera_motion_direction",
    "camera_plane_angle",
    "camera_turn",
    "camera_yaw",
    "ccw_to_clockwise",
    "closest",
    "depth_order",
    "direction_from_heading",
    "distance",
    "dominant_direction",
    "egocentric_facing",
    "faces",
    "facing_each_other",
    "facing_label",
    "farthest",
    "front_behind",
    "front_xy",
    "ground_ahead",
    "ground_axes",
    "ground_unit",
    "heading",
    "heading_matches_motion",
    "heading_of",
    "horizontal_fov",
    "image_region",
    "in_fov",
    "in_view",
    "left_right",
    "longitude_extent",
    "longitude_separation",
    "mask_area",
    "mask_bbox",
    "motion_direction",
    "move_camera",
    "near_far",
    "nearest_to_longitude",
    "objects_in_fov",
    "observer_relation",
    "observer_side",
    "occlusion_level",
    "panorama_latitude",
    "panorama_longitude",
    "panorama_pixel",
    "point_of",
    "projected_bbox",
    "rank_by_distance",
    "relation_in_frame",
    "relative_orientation_label",
    "rotate_about_vertical",
    "rotation_to_face",
    "rotation_to_face_camera",
    "side_in_frame",
    "signed_angle_xy",
    "straddles_seam",
    "turn_direction",
    "view_fraction",
    "visible_fraction",
    "wrap180",
    "wrap360",
    "yaw_difference",
]

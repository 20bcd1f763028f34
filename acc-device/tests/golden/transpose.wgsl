// transpose
@group(0) @binding(0) var<storage, read> p0: array<f32>; // a
@group(0) @binding(1) var<storage, read_write> p1: array<f32>; // b
struct Params {
    p2: u64,
    b0: u32,
    n0: u32,
    b1: u32,
    n1: u32,
    acc_groups: u32,
}
@group(0) @binding(2) var<storage, read> params: Params;
@group(0) @binding(3) var<storage, read_write> acc_status: array<atomic<u32>, 5>;
var<workgroup> acc_wa_0_9: array<f32, 1056>;
fn acc_trips32(n: u64) -> u32 {
    if (u32(n >> 32u) != 0u) { atomicCompareExchangeWeak(&acc_status[0], 0u, 3u); return 0u; }
    return u32(n);
}
fn acc_chunks_of(n: u64) -> u32 {
    let c = (n >> 31u) + select(0lu, 1lu, (u32(n) & 2147483647u) != 0u);
    return acc_trips32(c);
}
fn acc_in_bounds(param: u32, i: u64, len: u32) -> bool {
    if (u32(i >> 32u) == 0u && u32(i) < len) { return true; }
    if (atomicCompareExchangeWeak(&acc_status[0], 0u, 1u).exchanged) {
        atomicStore(&acc_status[1], param);
        atomicStore(&acc_status[2], u32(i));
        atomicStore(&acc_status[3], len);
        atomicStore(&acc_status[4], u32(i >> 32u));
    }
    return false;
}
@compute @workgroup_size(256)
fn transpose_gpu(@builtin(global_invocation_id) acc_gid: vec3<u32>, @builtin(local_invocation_index) acc_lid: u32, @builtin(workgroup_id) acc_wg: vec3<u32>, @builtin(num_workgroups) acc_nwg: vec3<u32>) {
    var l0: u64;
    var l1: u64;
    var l2: u64;
    var l3: u64;
    var l4: u64;
    var l5: u64;
    var l6: u64;
    var l7: u64;
    var l8: u64;
    let acc_trips_g0: u64 = ((params.p2 / 32lu) + select(0lu, 1lu, ((params.p2 % 32lu) != 0lu)));
    let acc_trips_g1: u64 = ((params.p2 / 32lu) + select(0lu, 1lu, ((params.p2 % 32lu) != 0lu)));
    let acc_trips_g: u64 = acc_trips_g0 * acc_trips_g1;
    let acc_chunks_g: u32 = acc_chunks_of(acc_trips_g);
    var acc_c_g: u32 = 0u;
    for (; acc_c_g < acc_chunks_g; acc_c_g = acc_c_g + 1u) {
    let acc_base_g: u64 = u64(acc_c_g) << 31u;
    let acc_left_g: u64 = acc_trips_g - acc_base_g;
    let acc_end_g: u32 = select(u32(acc_left_g), 2147483648u, (u32(acc_left_g >> 32u) | (u32(acc_left_g) >> 31u)) != 0u);
    var acc_k_g: u32 = acc_wg.x;
    for (; acc_k_g < acc_end_g; acc_k_g = acc_k_g + acc_nwg.x) {
        if (u32(acc_trips_g >> 32u) == 0u) {
            var acc_rest_g32: u32 = u32((acc_base_g + u64(acc_k_g)));
            l4 = 0lu + u64(acc_rest_g32 % u32(acc_trips_g1)) * 1lu;
            acc_rest_g32 = acc_rest_g32 / u32(acc_trips_g1);
            l2 = 0lu + u64(acc_rest_g32) * 1lu;
        } else {
            var acc_rest_g: u64 = u64((acc_base_g + u64(acc_k_g)));
            l4 = 0lu + u64(acc_rest_g % u64(acc_trips_g1)) * 1lu;
            acc_rest_g = acc_rest_g / u64(acc_trips_g1);
            l2 = 0lu + u64(acc_rest_g) * 1lu;
        }
        workgroupBarrier();
        {
    let acc_trips_v0: u64 = 1024lu;
    let acc_trips_v: u64 = acc_trips_v0;
    let acc_chunks_v: u32 = acc_chunks_of(acc_trips_v);
    var acc_c_v: u32 = 0u;
    for (; acc_c_v < acc_chunks_v; acc_c_v = acc_c_v + 1u) {
    let acc_base_v: u64 = u64(acc_c_v) << 31u;
    let acc_left_v: u64 = acc_trips_v - acc_base_v;
    let acc_end_v: u32 = select(u32(acc_left_v), 2147483648u, (u32(acc_left_v >> 32u) | (u32(acc_left_v) >> 31u)) != 0u);
    var acc_k_v: u32 = acc_lid;
    for (; acc_k_v < acc_end_v; acc_k_v = acc_k_v + 256u) {
        l6 = 0lu + u64((acc_base_v + u64(acc_k_v))) * 1lu;
            l8 = (l6 % 32lu);
            l7 = (l6 / 32lu);
            l0 = (0lu + (((l2 * 32lu) + l7) * 1lu));
            l1 = (0lu + (((l4 * 32lu) + l8) * 1lu));
            acc_wa_0_9[select(u32((l6 + (l6 / 32lu))), 4294967295u, u32((l6 + (l6 / 32lu)) >> 32u) != 0u)] = p0[params.b0 + select(0u, u32(select(0lu, ((l0 * params.p2) + l1), ((((l2 * 32lu) + l7) < params.p2) && (((l4 * 32lu) + l8) < params.p2)))), acc_in_bounds(0u, select(0lu, ((l0 * params.p2) + l1), ((((l2 * 32lu) + l7) < params.p2) && (((l4 * 32lu) + l8) < params.p2))), params.n0))];
    }
    }
        }
        workgroupBarrier();
        {
    let acc_trips_v0: u64 = 32lu;
    let acc_trips_v1: u64 = 32lu;
    let acc_trips_v: u64 = acc_trips_v0 * acc_trips_v1;
    let acc_chunks_v: u32 = acc_chunks_of(acc_trips_v);
    var acc_c_v: u32 = 0u;
    for (; acc_c_v < acc_chunks_v; acc_c_v = acc_c_v + 1u) {
    let acc_base_v: u64 = u64(acc_c_v) << 31u;
    let acc_left_v: u64 = acc_trips_v - acc_base_v;
    let acc_end_v: u32 = select(u32(acc_left_v), 2147483648u, (u32(acc_left_v >> 32u) | (u32(acc_left_v) >> 31u)) != 0u);
    var acc_k_v: u32 = acc_lid;
    for (; acc_k_v < acc_end_v; acc_k_v = acc_k_v + 256u) {
        if (u32(acc_trips_v >> 32u) == 0u) {
            var acc_rest_v32: u32 = u32((acc_base_v + u64(acc_k_v)));
            l3 = 0lu + u64(acc_rest_v32 % u32(acc_trips_v1)) * 1lu;
            acc_rest_v32 = acc_rest_v32 / u32(acc_trips_v1);
            l5 = 0lu + u64(acc_rest_v32) * 1lu;
        } else {
            var acc_rest_v: u64 = u64((acc_base_v + u64(acc_k_v)));
            l3 = 0lu + u64(acc_rest_v % u64(acc_trips_v1)) * 1lu;
            acc_rest_v = acc_rest_v / u64(acc_trips_v1);
            l5 = 0lu + u64(acc_rest_v) * 1lu;
        }
            if (((((l2 * 32lu) + l3) < params.p2) && (((l4 * 32lu) + l5) < params.p2))) {
                l0 = (0lu + (((l2 * 32lu) + l3) * 1lu));
                l1 = (0lu + (((l4 * 32lu) + l5) * 1lu));
                { let acc_i = ((l1 * params.p2) + l0); if (acc_in_bounds(1u, acc_i, params.n1)) { p1[params.b1 + u32(acc_i)] = acc_wa_0_9[select(u32(((l3 * 33lu) + l5)), 4294967295u, u32(((l3 * 33lu) + l5) >> 32u) != 0u)]; } }
            }
    }
    }
        }
    }
    }
}

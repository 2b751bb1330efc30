; ModuleID = "ptx"
target triple = "amdgcn-amd-amdhsa"
target datalayout = "e-m:e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"

define amdgpu_kernel void @"vadd"(i64 %"a", i64 %"b", i64 %"c", i32 %"n") "amdgpu-flat-work-group-size"="1,1024" "uniform-work-group-size"="true"
{
entry:
  %"cc" = alloca i1, addrspace(5)
  store i1 0, i1 addrspace(5)* %"cc"
  %"p1" = alloca i1, addrspace(5)
  %"r1" = alloca i32, addrspace(5)
  %"r2" = alloca i32, addrspace(5)
  %"r3" = alloca i32, addrspace(5)
  %"r4" = alloca i32, addrspace(5)
  %"r5" = alloca i32, addrspace(5)
  %"f1" = alloca i32, addrspace(5)
  %"f2" = alloca i32, addrspace(5)
  %"f3" = alloca i32, addrspace(5)
  %"rd1" = alloca i64, addrspace(5)
  %"rd2" = alloca i64, addrspace(5)
  %"rd3" = alloca i64, addrspace(5)
  %"rd4" = alloca i64, addrspace(5)
  %"rd5" = alloca i64, addrspace(5)
  %"rd6" = alloca i64, addrspace(5)
  %"rd7" = alloca i64, addrspace(5)
  br label %"body"
body:
  store i64 %"a", i64 addrspace(5)* %"rd1"
  store i64 %"b", i64 addrspace(5)* %"rd2"
  store i64 %"c", i64 addrspace(5)* %"rd3"
  store i32 %"n", i32 addrspace(5)* %"r1"
  %".23" = call i32 @"llvm.amdgcn.workgroup.id.x"()
  store i32 %".23", i32 addrspace(5)* %"r2"
  %".25" = call i8 addrspace(4)* @"llvm.amdgcn.implicitarg.ptr"()
  %".26" = getelementptr i8, i8 addrspace(4)* %".25", i64 12
  %".27" = bitcast i8 addrspace(4)* %".26" to i16 addrspace(4)*
  %".28" = load i16, i16 addrspace(4)* %".27", align 2, !invariant.load !0
  %".29" = zext i16 %".28" to i32
  store i32 %".29", i32 addrspace(5)* %"r3"
  %".31" = call i32 @"llvm.amdgcn.workitem.id.x"()
  store i32 %".31", i32 addrspace(5)* %"r4"
  %".33" = load i32, i32 addrspace(5)* %"r2"
  %".34" = load i32, i32 addrspace(5)* %"r3"
  %".35" = load i32, i32 addrspace(5)* %"r4"
  %".36" = mul i32 %".33", %".34"
  %".37" = add i32 %".36", %".35"
  store i32 %".37", i32 addrspace(5)* %"r5"
  %".39" = load i32, i32 addrspace(5)* %"r5"
  %".40" = load i32, i32 addrspace(5)* %"r1"
  %".41" = icmp sge i32 %".39", %".40"
  store i1 %".41", i1 addrspace(5)* %"p1"
  %".43" = load i1, i1 addrspace(5)* %"p1"
  br i1 %".43", label %"L_DONE", label %"fall"
L_DONE:
  ret void
fall:
  %".45" = load i32, i32 addrspace(5)* %"r5"
  %".46" = sext i32 %".45" to i64
  %".47" = sext i32 4 to i64
  %".48" = mul i64 %".46", %".47"
  store i64 %".48", i64 addrspace(5)* %"rd4"
  %".50" = load i64, i64 addrspace(5)* %"rd1"
  %".51" = load i64, i64 addrspace(5)* %"rd4"
  %".52" = add i64 %".50", %".51"
  store i64 %".52", i64 addrspace(5)* %"rd5"
  %".54" = load i64, i64 addrspace(5)* %"rd2"
  %".55" = load i64, i64 addrspace(5)* %"rd4"
  %".56" = add i64 %".54", %".55"
  store i64 %".56", i64 addrspace(5)* %"rd6"
  %".58" = load i64, i64 addrspace(5)* %"rd3"
  %".59" = load i64, i64 addrspace(5)* %"rd4"
  %".60" = add i64 %".58", %".59"
  store i64 %".60", i64 addrspace(5)* %"rd7"
  %".62" = load i64, i64 addrspace(5)* %"rd5"
  %".63" = inttoptr i64 %".62" to i8 addrspace(1)*
  %".99" = bitcast i8 addrspace(1)* %".63" to i32 addrspace(1)*
  %".66" = load i32, i32 addrspace(1)* %".99", align 4
  %".67" = bitcast i32 %".66" to float
  %".68" = bitcast float %".67" to i32
  store i32 %".68", i32 addrspace(5)* %"f1"
  %".70" = load i64, i64 addrspace(5)* %"rd6"
  %".71" = inttoptr i64 %".70" to i8 addrspace(1)*
  %".100" = bitcast i8 addrspace(1)* %".71" to i32 addrspace(1)*
  %".74" = load i32, i32 addrspace(1)* %".100", align 4
  %".75" = bitcast i32 %".74" to float
  %".76" = bitcast float %".75" to i32
  store i32 %".76", i32 addrspace(5)* %"f2"
  %".78" = load i32, i32 addrspace(5)* %"f1"
  %".79" = bitcast i32 %".78" to float
  %".80" = load i32, i32 addrspace(5)* %"f2"
  %".81" = bitcast i32 %".80" to float
  %".82" = fadd float %".79", %".81"
  %".83" = fcmp uno float %".82", %".82"
  %".84" = bitcast float %".82" to i32
  %".85" = select  i1 %".83", i32 2147483647, i32 %".84"
  %".86" = bitcast i32 %".85" to float
  %".87" = bitcast float %".86" to i32
  store i32 %".87", i32 addrspace(5)* %"f3"
  %".89" = load i64, i64 addrspace(5)* %"rd7"
  %".90" = inttoptr i64 %".89" to i8 addrspace(1)*
  %".92" = load i32, i32 addrspace(5)* %"f3"
  %".93" = bitcast i32 %".92" to float
  %".94" = bitcast float %".93" to i32
  %".101" = bitcast i8 addrspace(1)* %".90" to i32 addrspace(1)*
  store i32 %".94", i32 addrspace(1)* %".101", align 4
  br label %"L_DONE"
}

declare i32 @"llvm.amdgcn.workgroup.id.x"()

declare i8 addrspace(4)* @"llvm.amdgcn.implicitarg.ptr"()

declare i32 @"llvm.amdgcn.workitem.id.x"()

define amdgpu_kernel void @"warp_sum"(i64 %"out") "amdgpu-flat-work-group-size"="1,1024" "uniform-work-group-size"="true"
{
entry:
  %"cc" = alloca i1, addrspace(5)
  store i1 0, i1 addrspace(5)* %"cc"
  %"p1" = alloca i1, addrspace(5)
  %"r1" = alloca i32, addrspace(5)
  %"r2" = alloca i32, addrspace(5)
  %"r3" = alloca i32, addrspace(5)
  %"r4" = alloca i32, addrspace(5)
  %"r5" = alloca i32, addrspace(5)
  %"r6" = alloca i32, addrspace(5)
  %"rd1" = alloca i64, addrspace(5)
  %"rd2" = alloca i64, addrspace(5)
  %"rd3" = alloca i64, addrspace(5)
  br label %"body"
body:
  %".4" = call i32 @"llvm.amdgcn.workitem.id.x"()
  store i32 %".4", i32 addrspace(5)* %"r1"
  %".6" = load i32, i32 addrspace(5)* %"r1"
  %".8" = call i32 @"llvm.amdgcn.mbcnt.lo"(i32 -1, i32 0)
  %".9" = call i32 @"llvm.amdgcn.ballot.i32"(i1 1)
  %".10" = load i32, i32 addrspace(5)* %"r1"
  %".11" = and i32 16, 31
  %".12" = and i32 31, 31
  %".13" = lshr i32 31, 8
  %".14" = and i32 %".13", 31
  %".15" = and i32 %".8", %".14"
  %".16" = xor i32 %".14", -1
  %".17" = and i32 %".12", %".16"
  %".18" = or i32 %".15", %".17"
  %".19" = and i32 %".8", %".14"
  %".20" = xor i32 %".8", %".11"
  %".21" = icmp sle i32 %".20", %".18"
  %".22" = select  i1 %".21", i32 %".20", i32 %".8"
  %".23" = icmp ult i32 %".22", 32
  %".24" = and i32 %".22", 31
  %".25" = and i1 %".21", %".23"
  %".26" = lshr i32 %".9", %".24"
  %".27" = trunc i32 %".26" to i1
  %".28" = and i1 %".25", %".27"
  %".29" = and i32 %".24", 31
  %".30" = or i32 0, %".29"
  %".31" = shl i32 %".30", 2
  %".32" = call i32 @"llvm.amdgcn.ds.bpermute"(i32 %".31", i32 %".6")
  %".33" = zext i32 %".32" to i64
  %".34" = trunc i64 %".33" to i32
  %".35" = select  i1 %".28", i32 %".34", i32 %".10"
  store i32 %".35", i32 addrspace(5)* %"r2"
  store i1 %".21", i1 addrspace(5)* %"p1"
  %".38" = load i32, i32 addrspace(5)* %"r1"
  %".39" = load i32, i32 addrspace(5)* %"r2"
  %".40" = add i32 %".38", %".39"
  store i32 %".40", i32 addrspace(5)* %"r3"
  %".42" = load i32, i32 addrspace(5)* %"r3"
  %".44" = call i32 @"llvm.amdgcn.mbcnt.lo"(i32 -1, i32 0)
  %".45" = call i32 @"llvm.amdgcn.ballot.i32"(i1 1)
  %".46" = load i32, i32 addrspace(5)* %"r3"
  %".47" = and i32 1, 31
  %".48" = and i32 31, 31
  %".49" = lshr i32 31, 8
  %".50" = and i32 %".49", 31
  %".51" = and i32 %".44", %".50"
  %".52" = xor i32 %".50", -1
  %".53" = and i32 %".48", %".52"
  %".54" = or i32 %".51", %".53"
  %".55" = and i32 %".44", %".50"
  %".56" = add i32 %".44", %".47"
  %".57" = icmp sle i32 %".56", %".54"
  %".58" = select  i1 %".57", i32 %".56", i32 %".44"
  %".59" = icmp ult i32 %".58", 32
  %".60" = and i32 %".58", 31
  %".61" = and i1 %".57", %".59"
  %".62" = lshr i32 %".45", %".60"
  %".63" = trunc i32 %".62" to i1
  %".64" = and i1 %".61", %".63"
  %".65" = and i32 %".60", 31
  %".66" = or i32 0, %".65"
  %".67" = shl i32 %".66", 2
  %".68" = call i32 @"llvm.amdgcn.ds.bpermute"(i32 %".67", i32 %".42")
  %".69" = zext i32 %".68" to i64
  %".70" = trunc i64 %".69" to i32
  %".71" = select  i1 %".64", i32 %".70", i32 %".46"
  store i32 %".71", i32 addrspace(5)* %"r4"
  %".73" = load i32, i32 addrspace(5)* %"r4"
  %".74" = icmp ugt i32 %".73", 40
  store i1 %".74", i1 addrspace(5)* %"p1"
  %".76" = load i1, i1 addrspace(5)* %"p1"
  %".78" = call i32 @"llvm.amdgcn.mbcnt.lo"(i32 -1, i32 0)
  %".79" = call i32 @"llvm.amdgcn.ballot.i32"(i1 1)
  %".80" = call i32 @"llvm.amdgcn.ballot.i32"(i1 %".76")
  %".81" = and i32 %".79", 4294967295
  %".82" = and i32 %".80", %".81"
  store i32 %".82", i32 addrspace(5)* %"r5"
  store i64 %"out", i64 addrspace(5)* %"rd1"
  %".88" = load i32, i32 addrspace(5)* %"r1"
  %".89" = zext i32 %".88" to i64
  %".90" = zext i32 4 to i64
  %".91" = mul i64 %".89", %".90"
  store i64 %".91", i64 addrspace(5)* %"rd2"
  %".93" = load i64, i64 addrspace(5)* %"rd1"
  %".94" = load i64, i64 addrspace(5)* %"rd2"
  %".95" = add i64 %".93", %".94"
  store i64 %".95", i64 addrspace(5)* %"rd3"
  %".97" = load i32, i32 addrspace(5)* %"r4"
  %".98" = load i32, i32 addrspace(5)* %"r5"
  %".99" = add i32 %".97", %".98"
  store i32 %".99", i32 addrspace(5)* %"r6"
  %".101" = load i64, i64 addrspace(5)* %"rd3"
  %".102" = inttoptr i64 %".101" to i8 addrspace(1)*
  %".104" = load i32, i32 addrspace(5)* %"r6"
  %".108" = bitcast i8 addrspace(1)* %".102" to i32 addrspace(1)*
  store i32 %".104", i32 addrspace(1)* %".108", align 4
  ret void
}

declare i32 @"llvm.amdgcn.mbcnt.lo"(i32 %".1", i32 %".2")

declare i32 @"llvm.amdgcn.ballot.i32"(i1 %".1")

declare i32 @"llvm.amdgcn.ds.bpermute"(i32 %".1", i32 %".2")

define amdgpu_kernel void @"shared_step"(i64 %"out") "amdgpu-flat-work-group-size"="1,1024" "uniform-work-group-size"="true"
{
entry:
  %"cc" = alloca i1, addrspace(5)
  store i1 0, i1 addrspace(5)* %"cc"
  %"r1" = alloca i32, addrspace(5)
  %"r2" = alloca i32, addrspace(5)
  %"r3" = alloca i32, addrspace(5)
  %"r4" = alloca i32, addrspace(5)
  %"r5" = alloca i32, addrspace(5)
  %"r6" = alloca i32, addrspace(5)
  %"r7" = alloca i32, addrspace(5)
  %"rd1" = alloca i64, addrspace(5)
  %"rd2" = alloca i64, addrspace(5)
  %"rd3" = alloca i64, addrspace(5)
  br label %"body"
body:
  %".4" = call i32 @"llvm.amdgcn.workitem.id.x"()
  store i32 %".4", i32 addrspace(5)* %"r1"
  %".6" = load i32, i32 addrspace(5)* %"r1"
  %".7" = icmp ugt i32 2, 32
  %".8" = select  i1 %".7", i32 32, i32 2
  %".9" = icmp uge i32 %".8", 32
  %".10" = select  i1 %".9", i32 0, i32 %".8"
  %".11" = shl i32 %".6", %".10"
  %".12" = select  i1 %".9", i32 0, i32 %".11"
  store i32 %".12", i32 addrspace(5)* %"r2"
  %".14" = ptrtoint [1024 x i8] addrspace(3)* @"buf" to i32
  %".15" = zext i32 %".14" to i64
  %".16" = trunc i64 %".15" to i32
  store i32 %".16", i32 addrspace(5)* %"r3"
  %".18" = load i32, i32 addrspace(5)* %"r3"
  %".19" = load i32, i32 addrspace(5)* %"r2"
  %".20" = add i32 %".18", %".19"
  store i32 %".20", i32 addrspace(5)* %"r4"
  %".22" = load i32, i32 addrspace(5)* %"r4"
  %".23" = zext i32 %".22" to i64
  %".24" = trunc i64 %".23" to i32
  %".25" = inttoptr i32 %".24" to i8 addrspace(3)*
  %".27" = load i32, i32 addrspace(5)* %"r1"
  %".68" = bitcast i8 addrspace(3)* %".25" to i32 addrspace(3)*
  store i32 %".27", i32 addrspace(3)* %".68", align 4
  fence syncscope("workgroup") release
  call void @"llvm.amdgcn.s.barrier"()
  fence syncscope("workgroup") acquire
  %".33" = load i32, i32 addrspace(5)* %"r2"
  %".34" = xor i32 %".33", 4
  store i32 %".34", i32 addrspace(5)* %"r5"
  %".36" = load i32, i32 addrspace(5)* %"r3"
  %".37" = load i32, i32 addrspace(5)* %"r5"
  %".38" = add i32 %".36", %".37"
  store i32 %".38", i32 addrspace(5)* %"r6"
  %".40" = load i32, i32 addrspace(5)* %"r6"
  %".41" = zext i32 %".40" to i64
  %".42" = trunc i64 %".41" to i32
  %".43" = inttoptr i32 %".42" to i8 addrspace(3)*
  %".69" = bitcast i8 addrspace(3)* %".43" to i32 addrspace(3)*
  %".46" = load i32, i32 addrspace(3)* %".69", align 4
  store i32 %".46", i32 addrspace(5)* %"r7"
  store i64 %"out", i64 addrspace(5)* %"rd1"
  %".52" = load i32, i32 addrspace(5)* %"r1"
  %".53" = zext i32 %".52" to i64
  %".54" = zext i32 4 to i64
  %".55" = mul i64 %".53", %".54"
  store i64 %".55", i64 addrspace(5)* %"rd2"
  %".57" = load i64, i64 addrspace(5)* %"rd1"
  %".58" = load i64, i64 addrspace(5)* %"rd2"
  %".59" = add i64 %".57", %".58"
  store i64 %".59", i64 addrspace(5)* %"rd3"
  %".61" = load i64, i64 addrspace(5)* %"rd3"
  %".62" = inttoptr i64 %".61" to i8 addrspace(1)*
  %".64" = load i32, i32 addrspace(5)* %"r7"
  %".70" = bitcast i8 addrspace(1)* %".62" to i32 addrspace(1)*
  store i32 %".64", i32 addrspace(1)* %".70", align 4
  ret void
}

@"buf" = internal addrspace(3) global [1024 x i8] undef, align 4
declare void @"llvm.amdgcn.s.barrier"()

!llvm.module.flags = !{ !1 }
!0 = !{  }
!1 = !{ i32 1, !"amdhsa_code_object_version", i32 500 }
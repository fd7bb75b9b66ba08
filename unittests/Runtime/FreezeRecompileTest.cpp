//===- FreezeRecompileTest.cpp - The command that compiles again frozen ---===//
//
// freezeCommand: the manifest's recorded compile command with its own
// --freeze (in any spelling) replaced by the run's frozen-name file. The
// whole path (compile in the background, migrate, same weights) is
// test/Runtime/freeze-migrate.test.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/FreezeRecompile.h"

#include "gtest/gtest.h"

using namespace ftpipe::runtime;

namespace {

TEST(FreezeRecompile, ReplacesTheRecordedFreeze) {
  ManifestCompile recorded;
  recorded.model = "/m/model.mlir";
  recorded.arguments = {"--devices=4", "--freeze", "^bert\\.embeddings\\.",
                        "-O1"};
  ManifestCompile frozen =
      freezeCommand(recorded, "/w/freeze2.frozen", "", false);
  EXPECT_EQ(frozen.model, "/m/model.mlir");
  EXPECT_EQ(frozen.arguments,
            (std::vector<std::string>{"--devices=4", "-O1",
                                      "--freeze=@/w/freeze2.frozen"}));
  recorded.arguments = {"-freeze=@/old.frozen", "--devices=2",
                        "--freeze-not-a-flag=1"};
  EXPECT_EQ(freezeCommand(recorded, "f", "", false).arguments,
            (std::vector<std::string>{"--devices=2", "--freeze-not-a-flag=1",
                                      "--freeze=@f"}));
  recorded.arguments.clear();
  EXPECT_EQ(freezeCommand(recorded, "f", "", false).arguments,
            std::vector<std::string>{"--freeze=@f"});
}

TEST(FreezeRecompile, AddsTheExtraArgumentsLast) {
  ManifestCompile recorded;
  recorded.model = "/m/model.mlir";
  recorded.arguments = {"--devices=4", "-O1"};
  // --freeze-recompile-args: after the recorded ones, so that a repeated
  // flag (--devices) wins; runs of spaces separate nothing.
  EXPECT_EQ(freezeCommand(recorded, "f", " --replicas=2  --devices=2 ", false)
                .arguments,
            (std::vector<std::string>{"--devices=4", "-O1", "--freeze=@f",
                                      "--replicas=2", "--devices=2"}));
}

TEST(FreezeRecompile, RePacksUnlessTheExtraArgumentsSayOtherwise) {
  ManifestCompile recorded;
  recorded.model = "/m/model.mlir";
  recorded.arguments = {"--devices=4", "--replicas=none"};
  // Under MPI the planner may give the freed devices to replicas: its
  // --replicas=auto comes after the recorded flag and before the extra
  // ones, so the user's --replicas=none still wins.
  EXPECT_EQ(freezeCommand(recorded, "f", "", true).arguments,
            (std::vector<std::string>{"--devices=4", "--replicas=none",
                                      "--freeze=@f", "--replicas=auto"}));
  EXPECT_EQ(
      freezeCommand(recorded, "f", "--replicas=none", true).arguments,
      (std::vector<std::string>{"--devices=4", "--replicas=none", "--freeze=@f",
                                "--replicas=auto", "--replicas=none"}));
}

} // namespace

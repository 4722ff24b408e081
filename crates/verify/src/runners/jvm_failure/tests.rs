//! Maven 3.9 (Surefire 3) and Gradle 8 output for a test that calls a method the code does not
//! have, code that does not compile, a test that fails on `assertEquals`, and one the code
//! throws in. The javac lines are javac 17's own; the build tools' lines around them follow
//! their documented formats.

use pretty_assertions::assert_eq;

use super::*;
use crate::Runner;
use crate::failure::TestFileNames;

const MAVEN_TEST_DOES_NOT_COMPILE: &str = "\
[INFO] --- compiler:3.11.0:testCompile (default-testCompile) @ calc ---
[INFO] Compiling 1 source file with javac [debug target 17] to target/test-classes
[INFO] -------------------------------------------------------------
[ERROR] COMPILATION ERROR : 
[INFO] -------------------------------------------------------------
[ERROR] /w/src/test/java/com/example/CalcTest.java:[5,23] cannot find symbol
  symbol:   method addTwo(int,int)
  location: class com.example.Calc
[INFO] 1 error
[INFO] -------------------------------------------------------------
[INFO] BUILD FAILURE
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.11.0:testCompile (default-testCompile) on project calc: Compilation failure
[ERROR] /w/src/test/java/com/example/CalcTest.java:[5,23] cannot find symbol
[ERROR]   symbol:   method addTwo(int,int)
[ERROR]   location: class com.example.Calc
[ERROR] -> [Help 1]
";

const MAVEN_CODE_DOES_NOT_COMPILE: &str = "\
[INFO] --- compiler:3.11.0:compile (default-compile) @ calc ---
[ERROR] COMPILATION ERROR : 
[ERROR] /w/src/main/java/com/example/Calc.java:[5,20] cannot find symbol
  symbol:   variable c
  location: class com.example.Calc
[INFO] BUILD FAILURE
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.11.0:compile (default-compile) on project calc: Compilation failure
[ERROR] -> [Help 1]
";

const MAVEN_TESTS_FAIL: &str = "\
[INFO] Running com.example.CalcTest
[ERROR] Tests run: 2, Failures: 1, Errors: 1, Skipped: 0, Time elapsed: 0.041 s <<< FAILURE! -- in com.example.CalcTest
[ERROR] com.example.CalcTest.adds -- Time elapsed: 0.012 s <<< FAILURE!
org.opentest4j.AssertionFailedError: expected: <5> but was: <-1>
\tat org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)
\tat org.junit.jupiter.api.AssertEquals.assertEquals(AssertEquals.java:150)
\tat com.example.CalcTest.adds(CalcTest.java:10)

[ERROR] com.example.CalcTest.picks -- Time elapsed: 0.002 s <<< ERROR!
java.lang.ArrayIndexOutOfBoundsException: Index 5 out of bounds for length 2
\tat com.example.Calc.pick(Calc.java:9)
\tat com.example.CalcTest.picks(CalcTest.java:15)

[INFO] Results:
[ERROR] Failures: 
[ERROR]   CalcTest.adds:10 expected: <5> but was: <-1>
[ERROR] Errors: 
[ERROR]   CalcTest.picks:15 » ArrayIndexOutOfBounds Index 5 out of bounds for length 2
[ERROR] Tests run: 2, Failures: 1, Errors: 1, Skipped: 0
";

const GRADLE_TEST_DOES_NOT_COMPILE: &str = "\
> Task :compileJava UP-TO-DATE
> Task :compileTestJava FAILED
/w/src/test/java/com/example/CalcTest.java:5: error: cannot find symbol
        int got = Calc.addTwo(2, 3);
                      ^
  symbol:   method addTwo(int,int)
  location: class Calc
1 error

FAILURE: Build failed with an exception.

* What went wrong:
Execution failed for task ':compileTestJava'.
";

const GRADLE_TESTS_FAIL: &str = "\
> Task :test FAILED

CalcTest > adds() FAILED
    org.opentest4j.AssertionFailedError at CalcTest.java:10

CalcTest > picks() FAILED
    java.lang.ArrayIndexOutOfBoundsException at CalcTest.java:15

2 tests completed, 2 failed
";

fn reading(runner: Runner, stdout: &str) -> FailureReading {
    read(&crate::failure_excerpt(runner, stdout, ""), &TestFileNames)
}

#[test]
fn the_file_or_goal_that_did_not_compile_says_whose_mistake_it_is() {
    let actual = [
        reading(Runner::Maven, MAVEN_TEST_DOES_NOT_COMPILE).kind,
        reading(Runner::Maven, MAVEN_CODE_DOES_NOT_COMPILE).kind,
        reading(Runner::Gradle, GRADLE_TEST_DOES_NOT_COMPILE).kind,
    ];
    let expected = [
        FailureKind::TestMistake,
        FailureKind::CodeStopped,
        FailureKind::TestMistake,
    ];
    assert_eq!(actual, expected);
    assert_eq!(
        reading(Runner::Maven, MAVEN_TEST_DOES_NOT_COMPILE)
            .evidence
            .as_deref(),
        Some("[ERROR] /w/src/test/java/com/example/CalcTest.java:[5,23] cannot find symbol")
    );
}

#[test]
fn an_assertion_is_told_from_an_exception() {
    let maven = reading(Runner::Maven, MAVEN_TESTS_FAIL);
    assert_eq!(
        (maven.kind, maven.compared),
        (
            FailureKind::Assertion,
            vec!["expected: <5> but was: <-1>".to_string()]
        )
    );
    let thrown = MAVEN_TESTS_FAIL
        .lines()
        .filter(|line| !line.contains("expected"))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(reading(Runner::Maven, &thrown).kind, FailureKind::Other);
    // Gradle's console names the assertion error but not the values.
    let gradle = reading(Runner::Gradle, GRADLE_TESTS_FAIL);
    assert_eq!(
        (gradle.kind, gradle.compared.len()),
        (FailureKind::Assertion, 0)
    );
}

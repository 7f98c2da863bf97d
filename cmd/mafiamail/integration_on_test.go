//go:build integration

package main

// integration: with the build tag, the tests here play the long demo too.
const integration = true

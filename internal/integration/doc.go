// Package integration holds the tests that compose several of nettune's
// public packages against real daemons, as a program using them would:
// tuning's tuned profile, nic's [net] channels and tomcatconf's persistent
// drop-in in one systemd container that is rebooted, and nic's
// IRQBalanceStop against that systemd. It has no code of its own but the
// tests' TestMain; the packages stay independent of each other.
package integration

package core

// AccountID is the Alibaba Cloud account the emulator is: one account owns every resource, the
// Server's long-term key is its key (or one of its RAM users', Env.KeyUser), and the RAM roles
// instances carry are its roles. OSS shows the same number as every bucket's owner (oss.OwnerID).
const AccountID = "1000000000000000"

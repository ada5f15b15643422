module stagehand.example/prove

go 1.19

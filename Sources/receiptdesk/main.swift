import ReceiptDeskCLI

await ReceiptDesk.runMain()
